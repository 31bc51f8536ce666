package io.github.ratelimit.autoconfigure;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.observation.RateLimitMeterObservationHandler;
import io.github.ratelimit.store.RateLimitStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * Micrometer counters of decisions, when a {@link MeterRegistry} is available: {@code ratelimit.decisions} tagged
 * with {@code policy} and {@code outcome} ({@code allowed}, {@code rejected}, {@code rejected_locally},
 * {@code local_fallback_allowed}, {@code local_fallback_rejected}, {@code fail_open}, {@code fail_closed}),
 * {@code ratelimit.near.limit} (admissions after which at least {@code ratelimit.metrics.near-limit-ratio} of the
 * capacity is in use, as Envoy's {@code near_limit}), {@code ratelimit.store.failures} tagged with {@code policy} and
 * {@code cause}, and the gauges {@code ratelimit.circuit.open} and {@code ratelimit.memory.keys}. Tags never carry
 * keys, which are unbounded. The {@code ratelimit.decision} observation is the interceptor's; its timer is recorded by
 * {@link RateLimitMeterObservationHandler} (a span, where tracing is on, by the tracing handlers).
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
	RateLimitMetrics rateLimitMetrics(MeterRegistry meterRegistry, RateLimitProperties properties) {
		return new RateLimitMetrics(meterRegistry, properties.getMetrics().getNearLimitRatio());
	}

	/** Times the decision observation; ordered before Boot's default meter handler, which times the others. */
	@Bean
	@Order(0)
	@ConditionalOnMissingBean
	RateLimitMeterObservationHandler rateLimitMeterObservationHandler(MeterRegistry meterRegistry) {
		return new RateLimitMeterObservationHandler(meterRegistry);
	}

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitStateMeters")
	MeterBinder rateLimitStateMeters(ObjectProvider<RateLimiter> rateLimiter, ObjectProvider<RateLimitStore> store) {
		return (registry) -> {
			RateLimiter limiter = rateLimiter.getIfAvailable();
			if (limiter != null) {
				Gauge.builder("ratelimit.circuit.open", limiter, (l) -> l.isCircuitOpen() ? 1 : 0)
					.description("1 while a circuit breaker in front of the store (or one of its parts) is open")
					.register(registry);
			}
			if (store.getIfAvailable() instanceof InMemoryRateLimitStore memory) {
				Gauge.builder("ratelimit.memory.keys", memory, InMemoryRateLimitStore::size)
					.description("Keys the in-memory store holds")
					.register(registry);
			}
		};
	}

	/**
	 * Counts decisions and store failures per policy.
	 */
	static final class RateLimitMetrics implements RateLimitListener {

		private final MeterRegistry registry;

		private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

		private final double nearLimitRatio;

		RateLimitMetrics(MeterRegistry registry, double nearLimitRatio) {
			this.registry = registry;
			this.nearLimitRatio = nearLimitRatio;
		}

		@Override
		public void onDecision(RateLimitPolicy policy, Decision decision) {
			counter("ratelimit.decisions", policy.name(), "outcome", outcome(decision)).increment();
			if (decision.allowed() && decision.isKnown()
					&& decision.limit() - decision.remaining() >= this.nearLimitRatio * decision.limit()) {
				counter("ratelimit.near.limit", policy.name(), null, null).increment();
			}
		}

		@Override
		public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
			counter("ratelimit.shadow.rejections", policy.name(), null, null).increment();
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
			counter("ratelimit.store.failures", policy.name(), "cause", cause(failure)).increment();
		}

		/** The class of the failure's root cause: a small set (timeouts, refused connections, OOM replies). */
		private static String cause(@Nullable Throwable failure) {
			if (failure == null) {
				return "circuit-open"; // not called: the circuit breaker is open
			}
			Throwable cause = failure;
			while (cause.getCause() != null && cause.getCause() != cause) {
				cause = cause.getCause();
			}
			return cause.getClass().getSimpleName();
		}

		private Counter counter(String name, String policy, @Nullable String tag, @Nullable String value) {
			String id = name + '\u0000' + policy + '\u0000' + value;
			Counter counter = this.counters.get(id);
			if (counter == null) {
				counter = this.counters.computeIfAbsent(id, (key) -> {
					Counter.Builder builder = Counter.builder(name).tag("policy", policy);
					if (tag != null && value != null) {
						builder.tag(tag, value);
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
