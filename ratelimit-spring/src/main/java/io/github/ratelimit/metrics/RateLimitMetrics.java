package io.github.ratelimit.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.Decision;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer counters of decisions, as a {@link RateLimitListener}: {@code ratelimit.decisions} tagged with
 * {@code policy} and {@code outcome} ({@code allowed}, {@code rejected}, {@code rejected_locally},
 * {@code local_fallback_allowed}, {@code local_fallback_rejected}, {@code fail_open}, {@code fail_closed}, and
 * {@code shadow_rejected} for whatever a policy in shadow mode would have rejected), {@code ratelimit.near.limit}
 * (admissions after which at least the near-limit ratio of the capacity is in use, as Envoy's {@code near_limit}),
 * {@code ratelimit.shadow.rejections}, {@code ratelimit.store.failures} tagged with {@code policy} and
 * {@code cause}, and {@code ratelimit.charges.lost} (costs settled after the response that the store could not
 * take). Tags never carry keys, which are unbounded.
 *
 * @since 0.2.0
 */
public final class RateLimitMetrics implements RateLimitListener {

	private final MeterRegistry registry;

	/**
	 * By policy name: found with the name's cached hash, so a decision builds no key. Not bounded: it holds one
	 * entry per policy the application declares (annotations, yml, its own code), never one per request, and the
	 * registry holds meters for each of them anyway.
	 */
	private final ConcurrentHashMap<String, PolicyMeters> byPolicy = new ConcurrentHashMap<>();

	private final double nearLimitRatio;

	/**
	 * Create the counters.
	 * @param registry the registry to register them with
	 * @param nearLimitRatio the share of the capacity in use from which an admission counts as near the limit
	 */
	public RateLimitMetrics(MeterRegistry registry, double nearLimitRatio) {
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

	@Override
	public void onChargeLost(RateLimitPolicy policy, long units, Throwable failure) {
		meters(policy.name()).chargesLost().increment();
	}

	@Override
	public void onWait(RateLimitPolicy policy, long waitedMillis) {
		meters(policy.name()).waits().record(waitedMillis, TimeUnit.MILLISECONDS);
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
