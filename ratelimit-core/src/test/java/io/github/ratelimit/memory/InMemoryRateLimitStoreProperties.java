package io.github.ratelimit.memory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
	 * An adversary picks the order of requests over a store of four keys: its target, a few keys it keeps using, and
	 * any number of new keys, with any costs and pauses. Whatever it picks, the requests admitted for each key are
	 * ones the policy admits with unbounded memory: replayed alone against a store that never evicts, every one of
	 * them passes. So evictions never give a key more than its limit.
	 */
	@Property(tries = 1000)
	void evictionsNeverLetAKeyPassMoreThanThePolicyWouldWithUnboundedMemory(
			@ForAll("adversarialScenarios") RandomScenario scenario) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(clock).maxKeys(4).build();
		RateLimitPolicy policy = scenario.policy("p");
		Map<String, List<long[]>> admitted = new HashMap<>();
		int fresh = 0;
		for (RandomScenario.Step step : scenario.steps()) {
			clock.advanceMillis(step.advanceMillis());
			// Keys 0 to 3 come back; any other number stands for a key never used before.
			String key = (step.key() < 4) ? "key-" + step.key() : "new-" + fresh++;
			if (store.tryAcquire(policy, key, step.cost()).allowed()) {
				admitted.computeIfAbsent(key, (k) -> new ArrayList<>())
					.add(new long[] { clock.currentTimeMillis(), step.cost() });
			}
			assertThat(store.size()).isLessThanOrEqualTo(4);
		}
		admitted.forEach((key, requests) -> {
			MutableTimeSource replayClock = MutableTimeSource.atMillis(0);
			InMemoryRateLimitStore unbounded = InMemoryRateLimitStore.builder().clock(replayClock).build();
			for (long[] request : requests) {
				replayClock.set(request[0]);
				assertThat(unbounded.tryAcquire(policy, key, request[1]).allowed())
					.as("%s admitted %s units at %s", key, request[1], request[0])
					.isTrue();
			}
		});
	}

	@Provide
	Arbitrary<RandomScenario> adversarialScenarios() {
		return RandomScenario.scenarios(300, 12);
	}

	/**
	 * The longest a client can have to wait for the full capacity: a window, but two for the sliding counter (the
	 * current window's units weigh on the next one) and {@code burst/limit} windows for the buckets.
	 */
	private static long longestWait(RateLimitPolicy policy) {
		long window = policy.windowMillis();
		return switch (policy.algorithm()) {
			case FIXED, SLIDING_LOG, CONCURRENCY -> window;
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
