package io.github.ratelimit.benchmarks;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How many requests a gateway route's limiter admits over its limit when two gateways share one store: sends
 * {@code requests} concurrent requests of one client to the path, alternately to each gateway, and prints how many
 * were admitted (2xx), rejected (429) and otherwise answered.
 * <p>
 * {@snippet lang = "shell" :
 * java -cp benchmarks/target/benchmarks.jar io.github.ratelimit.benchmarks.GatewayExactness \
 *     http://127.0.0.1:8090 http://127.0.0.1:8091 /bench/exact-ours 200
 * }
 */
public final class GatewayExactness {

	private GatewayExactness() {
	}

	public static void main(String[] args) throws Exception {
		List<URI> gateways = List.of(URI.create(args[0]), URI.create(args[1]));
		String path = args[2];
		int requests = Integer.parseInt(args[3]);
		HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
		// One request to each first: connections and scripts ready, so that what is counted is the limiter's answer.
		for (URI gateway : gateways) {
			client.send(HttpRequest.newBuilder(gateway.resolve("/bench/unlimited")).build(),
					HttpResponse.BodyHandlers.discarding());
		}
		List<CompletableFuture<HttpResponse<Void>>> responses = new ArrayList<>(requests);
		for (int i = 0; i < requests; i++) {
			HttpRequest request = HttpRequest.newBuilder(gateways.get(i % 2).resolve(path))
				.timeout(Duration.ofSeconds(30))
				.build();
			responses.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
		}
		int admitted = 0;
		int rejected = 0;
		int other = 0;
		for (CompletableFuture<HttpResponse<Void>> response : responses) {
			int status = response.join().statusCode();
			if (status >= 200 && status < 300) {
				admitted++;
			}
			else if (status == 429) {
				rejected++;
			}
			else {
				other++;
			}
		}
		System.out.printf("%s: %d requests over two gateways, admitted=%d rejected=%d other=%d%n", path, requests,
				admitted, rejected, other);
	}

}
