package io.github.ratelimit.samples;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import io.github.ratelimit.samples.SampleApp.Stack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sample-gateway}, Spring Cloud Gateway in front of an API in this JVM, keeps the contract of the rate limited
 * routes: its {@code resources} and {@code orders} routes answer as the sample API's endpoints, from their
 * {@code RequestRateLimiter} filters.
 */
class SampleGatewayOverHttpTests extends RateLimitedRoutesContract {

	/** Created with the test instance, before the gateways start. */
	private final EchoUpstream upstream = EchoUpstream.start();

	@Override
	Stack stack() {
		return Stack.GATEWAY;
	}

	@Override
	List<String> stackArgs() {
		return List.of("--upstream.uri=" + this.upstream.uri());
	}

	@AfterAll
	void stopUpstream() {
		this.upstream.close();
	}

	@Test
	void aRejectedRequestNeverReachesTheUpstream() throws Exception {
		awayFromTheEndOfAWindowOf(Duration.ofMinutes(1));
		String address = newAddress();
		int before = this.upstream.requests();
		for (int i = 0; i < 5; i++) {
			assertThat(get(this.sample, "/api/v1/resources", address).statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(get(this.sample, "/api/v1/resources", address).statusCode()).isEqualTo(429);
		}
		assertThat(this.upstream.requests() - before).isEqualTo(5);
	}

	@Test
	void theRestOfTheApiPassesUnlimitedWithoutHeaders() throws Exception {
		String address = newAddress();
		for (int i = 0; i < 20; i++) {
			HttpResponse<String> response = get(this.tuned, "/api/v1/unlimited", address);
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
			assertThat(response.headers().firstValue("RateLimit-Limit")).isEmpty();
			assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
		}
	}

}
