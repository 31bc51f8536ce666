package io.github.ratelimit.observation;

import io.github.ratelimit.Decision;
import io.micrometer.common.KeyValues;

/**
 * The default convention of the {@code ratelimit.decision} observation: low-cardinality tags {@code policy},
 * {@code store} and {@code outcome} ({@code allowed}, {@code rejected}, {@code fallback}, {@code fail-open},
 * {@code fail-closed}, or {@code error} when deciding threw).
 *
 * @since 0.1.0
 */
public class DefaultRateLimitObservationConvention implements RateLimitObservationConvention {

	/** The observation's name, and so the timer's. */
	public static final String NAME = "ratelimit.decision";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(RateLimitObservationContext context) {
		return "ratelimit " + context.getPolicy().name();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RateLimitObservationContext context) {
		Decision decision = context.getDecision();
		String outcome = (context.isShadow() && decision != null && !decision.allowed()) ? "shadow-rejected"
				: outcome(decision);
		// In key order: key values given sorted are not sorted again, here and in the meters' tags.
		return KeyValues.of("outcome", outcome, "policy", context.getPolicy().name(), "store", context.getStore());
	}

	/**
	 * Return the outcome tag of a decision.
	 * @param decision the decision, or {@code null} if deciding failed
	 * @return the outcome
	 */
	public static String outcome(@org.jspecify.annotations.Nullable Decision decision) {
		if (decision == null) {
			return "error";
		}
		return switch (decision.origin()) {
			case STORE, DENY_CACHE -> decision.allowed() ? "allowed" : "rejected";
			case LOCAL_FALLBACK -> "fallback";
			case FAIL_OPEN -> "fail-open";
			case FAIL_CLOSED -> "fail-closed";
		};
	}

}
