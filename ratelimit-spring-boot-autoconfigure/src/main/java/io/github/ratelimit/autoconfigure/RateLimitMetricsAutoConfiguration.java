package io.github.ratelimit.autoconfigure;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.Decision;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.observation.RateLimitMeterObservationHandler;
import io.github.ratelimit.store.RateLimitStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
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

		private final MeterRegistry registry;

		/**
		 * By policy name: found with the name's cached hash, so a decision builds no key. Not bounded: it holds one
		 * entry per policy the application declares (annotations, yml, its own code), never one per request, and the
		 * registry holds meters for each of them anyway.
		 */
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
			return (meters != null) ? meters
					: this.byPolicy.computeIfAbsent(policy, (name) -> new PolicyMeters(this.registry, name));
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

	/**
	 * One policy's counters, each registered on first use. The two counted on every decision are {@link LongAdder}s
	 * that the registry reads when it publishes (function counters): in a CPU profile of the sample app under load,
	 * incrementing a registry's own counter (a {@code DoubleAdder}) took 0.3 µs per decision, the most expensive step
	 * of {@code @RateLimited}, a {@code LongAdder} a fifth or less. Store failures and shadow rejections are rare and
	 * use the registry's counters.
	 */
	private static final class PolicyMeters {

		private static final String[] OUTCOMES = { "allowed", "rejected", "rejected_locally", "local_fallback_allowed",
				"local_fallback_rejected", "fail_open", "fail_closed", "shadow_rejected" };

		private final MeterRegistry registry;

		private final String policy;

		/** By outcome; each registered once, as a second registration would read a count nobody increments. */
		private final AtomicReferenceArray<@Nullable LongAdder> decisions = new AtomicReferenceArray<>(OUTCOMES.length);

		private volatile @Nullable LongAdder nearLimit;

		private volatile @Nullable Counter shadowRejections;

		/** By cause: a small set of exception class names. */
		private final ConcurrentHashMap<String, Counter> storeFailures = new ConcurrentHashMap<>();

		PolicyMeters(MeterRegistry registry, String policy) {
			this.registry = registry;
			this.policy = policy;
		}

		LongAdder decisions(Decision decision, boolean shadow) {
			// A shadow policy rejects nothing: what it would have rejected is an outcome of its own.
			int outcome = (shadow && !decision.allowed()) ? 7 : outcome(decision);
			LongAdder count = this.decisions.get(outcome);
			return (count != null) ? count : registerDecisions(outcome);
		}

		private synchronized LongAdder registerDecisions(int outcome) {
			LongAdder count = this.decisions.get(outcome);
			if (count == null) {
				count = register("ratelimit.decisions", Tags.of("outcome", OUTCOMES[outcome], "policy", this.policy));
				this.decisions.set(outcome, count);
			}
			return count;
		}

		LongAdder nearLimit() {
			LongAdder count = this.nearLimit;
			return (count != null) ? count : registerNearLimit();
		}

		private synchronized LongAdder registerNearLimit() {
			LongAdder count = this.nearLimit;
			if (count == null) {
				count = register("ratelimit.near.limit", Tags.of("policy", this.policy));
				this.nearLimit = count;
			}
			return count;
		}

		private LongAdder register(String name, Tags tags) {
			LongAdder count = new LongAdder();
			// The meter holds the adder weakly; this object holds it for as long as the listener lives.
			FunctionCounter.builder(name, count, LongAdder::sum).tags(tags).register(this.registry);
			return count;
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
