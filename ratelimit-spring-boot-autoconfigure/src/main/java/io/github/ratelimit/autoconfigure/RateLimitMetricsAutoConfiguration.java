package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.metrics.RateLimitMetrics;
import io.github.ratelimit.observation.RateLimitMeterObservationHandler;
import io.github.ratelimit.store.RateLimitStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

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
 * {@code local_fallback_allowed}, {@code local_fallback_rejected}, {@code fail_open}, {@code fail_closed}, and
 * {@code shadow_rejected} for whatever a policy in shadow mode would have rejected),
 * {@code ratelimit.near.limit} (admissions after which at least {@code ratelimit.metrics.near-limit-ratio} of the
 * capacity is in use, as Envoy's {@code near_limit}), {@code ratelimit.store.failures} tagged with {@code policy} and
 * {@code cause}, {@code ratelimit.charges.lost} tagged with {@code policy} (costs settled after the response that the
 * store could not take), and the gauges {@code ratelimit.circuit.open} and {@code ratelimit.memory.keys}. Tags never carry
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
	RateLimitMetrics rateLimitMetrics(MeterRegistry meterRegistry, ObjectProvider<RateLimitProperties> properties) {
		// No properties when the application excluded RateLimitAutoConfiguration: nothing to count, but no failure.
		return new RateLimitMetrics(meterRegistry,
				properties.getIfAvailable(RateLimitProperties::new).getMetrics().getNearLimitRatio());
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

}
