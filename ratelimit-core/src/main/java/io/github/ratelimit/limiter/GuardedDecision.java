package io.github.ratelimit.limiter;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.RateLimitStore;

/**
 * One acquisition decided past the limiter's fast path: a remembered denial first, then the store behind the circuit
 * breaker of its part, and the policy's failure mode when the store fails or its breaker is open.
 */
final class GuardedDecision {

	private final RateLimitStore asked;

	private final Denials denials;

	private final StoreBreakers breakers;

	private final FailureModes failureModes;

	private final TimeSource clock;

	private final RateLimitListener listener;

	GuardedDecision(RateLimitStore asked, Denials denials, StoreBreakers breakers, FailureModes failureModes,
			TimeSource clock, RateLimitListener listener) {
		this.asked = asked;
		this.denials = denials;
		this.breakers = breakers;
		this.failureModes = failureModes;
		this.clock = clock;
		this.listener = listener;
	}

	Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
		long now = this.clock.currentTimeMillis();
		long resets = this.denials.resets();
		Decision denied = this.denials.cached(policy, key, cost, now);
		if (denied != null) {
			return notify(policy, denied);
		}
		CircuitBreaker breaker = this.breakers.of(policy, key);
		CircuitBreaker.Permission permission = breaker.tryCall(now);
		if (permission == CircuitBreaker.Permission.SKIP) {
			return this.failureModes.onStoreFailure(policy, key, cost, now, breaker, null);
		}
		Decision decision;
		boolean reported = false;
		try {
			decision = this.asked.tryAcquire(policy, key, cost);
			breaker.onSuccess();
			reported = true;
		}
		catch (RuntimeException ex) {
			if (!(ex instanceof IllegalArgumentException)) {
				reported = true;
			}
			return onStoreException(policy, key, cost, breaker, permission, ex);
		}
		finally {
			if (!reported) {
				breaker.release(permission); // a probe must not stay taken by an error or a bug
			}
		}
		this.denials.remember(policy, key, cost, decision, now, resets);
		return notify(policy, decision);
	}

	/** The store threw: the breaker learns of it, the policy's failure mode decides (a programming error is rethrown). */
	Decision onStoreException(RateLimitPolicy policy, String key, long cost, CircuitBreaker breaker,
			CircuitBreaker.Permission permission, RuntimeException ex) {
		if (ex instanceof IllegalArgumentException) {
			throw ex; // a programming error, not an outage
		}
		long now = this.clock.currentTimeMillis();
		breaker.onFailure(now, permission, ex);
		return this.failureModes.onStoreFailure(policy, key, cost, now, breaker, ex);
	}

	private Decision notify(RateLimitPolicy policy, Decision decision) {
		this.listener.onDecision(policy, decision);
		return decision;
	}

}
