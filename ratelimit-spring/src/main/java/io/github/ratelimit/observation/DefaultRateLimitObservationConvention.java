package io.github.ratelimit.observation;

import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

/**
 * The default convention of the {@code ratelimit.decision} observation: low-cardinality tags {@code policy},
 * {@code store} and {@code outcome}: {@code allowed}, {@code rejected}, {@code shadow-rejected}, {@code fallback},
 * {@code fail-open}, {@code fail-closed}, {@code error} when deciding threw, {@code not-decided} when the store was
 * not asked (a cached rejection of another policy of the request rejected it first), and {@code unknown} while the
 * decision is being made.
 *
 * @since 0.1.0
 */
public class DefaultRateLimitObservationConvention implements RateLimitObservationConvention {

	/** The observation's name, and so the timer's. */
	public static final String NAME = "ratelimit.decision";

	private static final String[] OUTCOMES = { "unknown", "allowed", "rejected", "shadow-rejected", "fallback",
			"fail-open", "fail-closed", "error", "not-decided" };

	/** Policy names are configured, so few; past this many, key values are built for each decision. */
	private static final int MAX_POLICIES = 10_000;

	/**
	 * By policy name, the key values of each outcome and the contextual name, built once: a decision takes
	 * microseconds, and building them twice per observation was a good part of its cost.
	 */
	private final ConcurrentHashMap<String, PolicyKeyValues> byPolicy = new ConcurrentHashMap<>();

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(RateLimitObservationContext context) {
		return keyValues(context).contextualName;
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RateLimitObservationContext context) {
		return keyValues(context).byOutcome[outcomeIndex(context)];
	}

	/** The policy's key values: found once per observation (at start), then kept in its context for the stop. */
	private PolicyKeyValues keyValues(RateLimitObservationContext context) {
		PolicyKeyValues found = context.conventionKeyValues;
		if (found != null) {
			return found;
		}
		String policy = context.getPolicy().name();
		PolicyKeyValues keyValues = this.byPolicy.get(policy);
		if (keyValues == null || !keyValues.store.equals(context.getStore())) {
			keyValues = new PolicyKeyValues(policy, context.getStore());
			if (this.byPolicy.size() < MAX_POLICIES) {
				this.byPolicy.put(policy, keyValues);
			}
		}
		context.conventionKeyValues = keyValues;
		return keyValues;
	}

	private static int outcomeIndex(RateLimitObservationContext context) {
		Decision decision = context.getDecision();
		if (decision == null) {
			if (context.getError() != null) {
				return 7;
			}
			return context.isNotDecided() ? 8 : 0;
		}
		return (context.isShadow() && !decision.allowed()) ? 3 : decisionIndex(decision);
	}

	/** The index in {@link #OUTCOMES} of what a decision says by its origin. */
	private static int decisionIndex(Decision decision) {
		return switch (decision.origin()) {
			case STORE, LEASE, DENY_CACHE, PENALTY -> decision.allowed() ? 1 : 2;
			case LOCAL_FALLBACK -> 4;
			case FAIL_OPEN -> 5;
			case FAIL_CLOSED -> 6;
		};
	}

	/**
	 * Return the outcome tag of a decision.
	 * @param decision the decision, or {@code null} if deciding failed
	 * @return the outcome
	 */
	public static String outcome(@Nullable Decision decision) {
		return (decision != null) ? OUTCOMES[decisionIndex(decision)] : "error";
	}

	/** One policy's key values, by outcome index. */
	static final class PolicyKeyValues {

		private final String store;

		private final String contextualName;

		private final KeyValues[] byOutcome = new KeyValues[OUTCOMES.length];

		PolicyKeyValues(String policy, String store) {
			this.store = store;
			this.contextualName = "ratelimit " + policy;
			for (int i = 0; i < OUTCOMES.length; i++) {
				// In key order: key values given sorted are not sorted again, here and in the meters' tags.
				this.byOutcome[i] = KeyValues.of("outcome", OUTCOMES[i], "policy", policy, "store", store);
			}
		}

	}

}
