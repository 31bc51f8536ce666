package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /api/v1/exports} over real HTTP: 1,000 rows a minute (a token bucket), each request reserving 100 and settled to the rows it
 * exported, so that small exports give back what they did not use and a large one leaves the client in debt.
 */
@Import(SampleApplicationTests.StillClock.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS, "ratelimit.filters.edge.enabled=false",
				"ratelimit.client-ip.trusted-proxies=127.0.0.1/32" })
class SettledCostOverHttpTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void smallExportsGiveBackWhatTheyReservedAndALargeOneLeavesTheClientInDebt() throws Exception {
		for (int i = 0; i < 20; i++) {
			assertThat(export(10, "198.51.100.1").statusCode()).as("20 × 10 rows, though 100 are reserved each time")
				.isEqualTo(200);
		}
		HttpResponse<String> large = export(4_000, "198.51.100.1");
		assertThat(large.statusCode()).as("served, whatever it turns out to cost").isEqualTo(200);
		assertThat(large.body()).contains("\"rows\":4000");
		HttpResponse<String> inDebt = export(1, "198.51.100.1");
		assertThat(inDebt.statusCode()).as("4,200 of 1,000 used: in debt until the refill repays it").isEqualTo(429);
		assertThat(export(1, "198.51.100.2").statusCode()).as("another client owes nothing").isEqualTo(200);
	}

	private HttpResponse<String> export(int rows, String client) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port
				+ "/api/v1/exports?rows=" + rows)).header("X-Forwarded-For", client).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
