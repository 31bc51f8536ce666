package io.github.ratelimit.limiter;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The parts of a {@link RateLimiter} that a decision of several acquisitions ({@link AdmissionAttempt}), and what its
 * {@link Admission} gives back, work with.
 *
 * @param asked the store decisions go to, behind this instance's leased blocks if it is shared
 * @param denials the denials remembered in front of a remote store
 * @param breakers the circuit breakers of the store's parts
 * @param failureModes what decides when the store cannot
 * @param adjustments what gives units back or charges them after a decision
 * @param clock the clock of local decisions
 * @param listener what every decision is told to
 * @param unlimited whether the limiter is {@link RateLimiter#unlimited()}, which admits even a cost beyond the capacity
 */
record LimiterParts(RateLimitStore asked, Denials denials, StoreBreakers breakers, FailureModes failureModes,
		Adjustments adjustments, TimeSource clock, RateLimitListener listener, boolean unlimited) {

	/** The circuit breaker of the part of the store that decides for an acquisition. */
	CircuitBreaker breakerOf(Acquisition acquisition) {
		return this.breakers.of(acquisition.policy(), acquisition.key());
	}

	Decision notify(RateLimitPolicy policy, Decision decision) {
		this.listener.onDecision(policy, decision);
		return decision;
	}

}
