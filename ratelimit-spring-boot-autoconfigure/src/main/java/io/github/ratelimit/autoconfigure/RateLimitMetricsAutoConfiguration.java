package io.github.ratelimit.autoconfigure;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.PolicyMode;
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
 * {@code local_fallback_allowed}, {@code local_fallback_rejected}, {@code fail_open}, {@code fail_closed}, and
 * {@code shadow_rejected} for whatever a policy in shadow mode would have rejected),
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

		/** Policy names are configured, so few; past this many, meters are looked up in the registry each time. */
		private static final int MAX_POLICIES = 10_000;

		private final MeterRegistry registry;

		/** By policy name: found with the name's cached hash, so a decision builds no key. */
		private final ConcurrentHashMap<String, PolicyMeters> byPolicy = new ConcurrentHashMap<>();

		private final double nearLimitRatio;

		RateLimitMetrics(MeterRegistry registry, double nearLimitRatio) {
			this.registry = registry;
			this.nearLimitRatio = nearLimitRatio;
		}

		@Override
		public void onDecision(RateLimitPolicy policy, Decision decision) {
			PolicyMeters meters = meters(policy.name());
			meters.decisions(decision, policy.mode() == PolicyMode.SHADOW).increment();
			if (decision.allowed() && decision.isKnown()
					&& decision.limit() - decision.remaining() >= this.nearLimitRatio * decision.limit()) {
				meters.nearLimit().increment();
			}
		}

		@Override
		public void onShadowRejection(RateLimitPolicy policy, Decision decision) {
			meters(policy.name()).shadowRejections().increment();
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, @Nullable RuntimeException failure) {
			meters(policy.name()).storeFailures(cause(failure)).increment();
		}

		private PolicyMeters meters(String policy) {
			PolicyMeters meters = this.byPolicy.get(policy);
			if (meters == null) {
				meters = new PolicyMeters(this.registry, policy);
				if (this.byPolicy.size() < MAX_POLICIES) {
					PolicyMeters existing = this.byPolicy.putIfAbsent(policy, meters);
					meters = (existing != null) ? existing : meters;
				}
			}
			return meters;
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

	}

	/** One policy's counters, each registered on first use. */
	private static final class PolicyMeters {

		private static final String[] OUTCOMES = { "allowed", "rejected", "rejected_locally", "local_fallback_allowed",
				"local_fallback_rejected", "fail_open", "fail_closed", "shadow_rejected" };

		private final MeterRegistry registry;

		private final String policy;

		private final @Nullable Counter[] decisions = new Counter[OUTCOMES.length];

		private volatile @Nullable Counter nearLimit;

		private volatile @Nullable Counter shadowRejections;

		/** By cause: a small set of exception class names. */
		private final ConcurrentHashMap<String, Counter> storeFailures = new ConcurrentHashMap<>();

		PolicyMeters(MeterRegistry registry, String policy) {
			this.registry = registry;
			this.policy = policy;
		}

		Counter decisions(Decision decision, boolean shadow) {
			// A shadow policy rejects nothing: what it would have rejected is an outcome of its own.
			int outcome = (shadow && !decision.allowed()) ? 7 : outcome(decision);
			Counter counter = this.decisions[outcome];
			if (counter == null) {
				// Registering twice is harmless: the registry gives back the counter it holds.
				counter = Counter.builder("ratelimit.decisions")
					.tag("policy", this.policy)
					.tag("outcome", OUTCOMES[outcome])
					.register(this.registry);
				this.decisions[outcome] = counter;
			}
			return counter;
		}

		Counter nearLimit() {
			Counter counter = this.nearLimit;
			if (counter == null) {
				counter = Counter.builder("ratelimit.near.limit").tag("policy", this.policy).register(this.registry);
				this.nearLimit = counter;
			}
			return counter;
		}

		Counter shadowRejections() {
			Counter counter = this.shadowRejections;
			if (counter == null) {
				counter = Counter.builder("ratelimit.shadow.rejections")
					.tag("policy", this.policy)
					.register(this.registry);
				this.shadowRejections = counter;
			}
			return counter;
		}

		Counter storeFailures(String cause) {
			return this.storeFailures.computeIfAbsent(cause, (key) -> Counter.builder("ratelimit.store.failures")
				.tag("policy", this.policy)
				.tag("cause", key)
				.register(this.registry));
		}

		/** The index in {@link #OUTCOMES}. */
		private static int outcome(Decision decision) {
			return switch (decision.origin()) {
				case STORE -> decision.allowed() ? 0 : 1;
				case DENY_CACHE -> 2;
				case LOCAL_FALLBACK -> decision.allowed() ? 3 : 4;
				case FAIL_OPEN -> 5;
				case FAIL_CLOSED -> 6;
			};
		}

	}

}
