package io.github.ratelimit.gateway;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link GatewayRateLimiter#unlimited()}, the gateway's limiter while every limit is off: each route is admitted with
 * no header, whatever its arguments, and the Java DSL's {@code forPolicy} still gives a limiter.
 */
class UnlimitedGatewayRateLimiterTests {

	private final GatewayRateLimiter gateway = GatewayRateLimiter.unlimited();

	@Test
	void admitsEveryRequestOfEveryRouteWithNoHeader() {
		for (int i = 0; i < 10; i++) {
			Response response = this.gateway.isAllowed("resources", "198.51.100.1").block();
			assertThat(response.isAllowed()).isTrue();
			assertThat(response.getHeaders()).isEmpty();
		}
	}

	@Test
	void aRouteBuiltLaterAndAPolicyOfTheJavaDslAreNeitherCheckedNorLimited() {
		this.gateway.onApplicationEvent(new FilterArgsEvent(this, "late", Map.of("ratelimit.limit", "five")));
		assertThat(this.gateway.isAllowed("late", "k").block().isAllowed()).isTrue();
		GatewayRateLimiter forPolicy = this.gateway.forPolicy("orders", Map.of("limit", 1, "window", "1m"));
		assertThat(forPolicy.isAllowed("orders", "k").block().isAllowed()).isTrue();
		assertThat(forPolicy.isAllowed("orders", "k").block().isAllowed()).isTrue();
		assertThat(this.gateway.getConfig()).isEmpty();
	}

}
