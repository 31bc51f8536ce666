package io.github.ratelimit.metrics;

import java.time.Duration;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.RateLimitStoreException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMetricsTests {

	@Test
	void aChargeTheStoreLostIsCountedUnderItsPolicy() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		RateLimitMetrics metrics = new RateLimitMetrics(registry, 0.8);
		RateLimitPolicy completions = RateLimitPolicy.builder("completions").limit(10).window(Duration.ofMinutes(1))
			.build();
		metrics.onChargeLost(completions, 900, new RateLimitStoreException("store unreachable"));
		metrics.onChargeLost(completions, 50, new RateLimitStoreException("store unreachable"));
		assertThat(registry.get("ratelimit.charges.lost").tag("policy", "completions").counter().count())
			.isEqualTo(2);
	}

}
