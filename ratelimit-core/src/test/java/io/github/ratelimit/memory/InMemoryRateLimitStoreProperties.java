package io.github.ratelimit.memory;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.RandomScenario;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random request sequences against a store too small for their keys, so that it evicts all along.
 */
class InMemoryRateLimitStoreProperties {

	@Property(tries = 1000)
	void aFullStoreNeverAnswersAWaitBeyondTheTimeTheFullCapacityTakesToComeBack(
			@ForAll("scenarios") RandomScenario scenario) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		// Three keys in a store that holds two.
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).maxKeys(2).build();
		RateLimitPolicy policy = scenario.policy("p");
		long longest = longestWait(policy);
		for (RandomScenario.Step step : scenario.steps()) {
			clock.advanceMillis(step.advanceMillis());
			Decision decision = store.tryAcquire(policy, "key-" + step.key(), step.cost());
			assertThat(decision.remaining()).isBetween(0L, policy.capacity());
			assertThat(decision.resetAfterMillis()).isBetween(0L, longest);
			if (decision.allowed()) {
				assertThat(decision.retryAfterMillis()).isZero();
			}
			else if (step.cost() > policy.capacity()) {
				assertThat(decision.retryAfterMillis()).isEqualTo(Decision.NEVER);
			}
			else {
				assertThat(decision.retryAfterMillis()).isBetween(1L, decision.resetAfterMillis());
			}
			assertThat(store.size()).isLessThanOrEqualTo(2);
		}
	}

	/**
	 * The longest a client can have to wait for the full capacity: a window, but two for the sliding counter (the
	 * current window's units weigh on the next one) and {@code burst/limit} windows for the buckets.
	 */
	private static long longestWait(RateLimitPolicy policy) {
		long window = policy.windowMillis();
		return switch (policy.algorithm()) {
			case FIXED, SLIDING_LOG -> window;
			case SLIDING_COUNTER -> 2 * window;
			case TOKEN_BUCKET, LEAKY_BUCKET -> IntMath.ceilDiv(policy.burst() * policy.unitsPerToken(),
					policy.unitsPerMilli());
		};
	}

	@Provide
	Arbitrary<RandomScenario> scenarios() {
		return RandomScenario.scenarios(200);
	}

}
