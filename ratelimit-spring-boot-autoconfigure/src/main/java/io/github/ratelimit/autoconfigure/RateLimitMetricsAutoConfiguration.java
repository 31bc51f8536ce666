package io.github.ratelimit.autoconfigure;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;

/**
 * Micrometer counters of decisions, when a {@link MeterRegistry} is available: {@code ratelimit.decisions} tagged
 * with {@code policy} and {@code outcome} ({@code allowed}, {@code rejected}, {@code rejected_locally},
 * {@code local_fallback_allowed}, {@code local_fallback_rejected}, {@code fail_open}, {@code fail_closed}), and
 * {@code ratelimit.store.failures} tagged with {@code policy}. Tags never carry keys, which are unbounded.
 * <p>
 * Ordered after Spring Boot's metrics auto-configurations, so that the registry they define is seen: as a
 * configuration imported by {@link RateLimitAutoConfiguration}, it was evaluated before them and backed off in an
 * application whose only registry was Boot's.
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class RateLimitMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitMetrics rateLimitMetrics(MeterRegistry meterRegistry) {
		return new RateLimitMetrics(meterRegistry);
	}

	/**
	 * Counts decisions and store failures per policy.
	 */
	static final class RateLimitMetrics implements RateLimitListener {

		private final MeterRegistry registry;

		private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

		RateLimitMetrics(MeterRegistry registry) {
			this.registry = registry;
		}

		@Override
		public void onDecision(RateLimitPolicy policy, Decision decision) {
			counter("ratelimit.decisions", policy.name(), outcome(decision)).increment();
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
			counter("ratelimit.store.failures", policy.name(), null).increment();
		}

		private Counter counter(String name, String policy, @Nullable String outcome) {
			String id = name + '\u0000' + policy + '\u0000' + outcome;
			Counter counter = this.counters.get(id);
			if (counter == null) {
				counter = this.counters.computeIfAbsent(id, (key) -> {
					Counter.Builder builder = Counter.builder(name).tag("policy", policy);
					if (outcome != null) {
						builder.tag("outcome", outcome);
					}
					return builder.register(this.registry);
				});
			}
			return counter;
		}

		private static String outcome(Decision decision) {
			return switch (decision.origin()) {
				case STORE -> decision.allowed() ? "allowed" : "rejected";
				case DENY_CACHE -> "rejected_locally";
				case LOCAL_FALLBACK -> decision.allowed() ? "local_fallback_allowed" : "local_fallback_rejected";
				case FAIL_OPEN -> "fail_open";
				case FAIL_CLOSED -> "fail_closed";
			};
		}

	}

}
