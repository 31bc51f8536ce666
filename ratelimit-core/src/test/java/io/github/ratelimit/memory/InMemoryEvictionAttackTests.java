package io.github.ratelimit.memory;

import java.time.Duration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two schedules of the 2026-12-05 audit (point 39.1), through the public API: pairs of new keys alternated
 * after each request on a target, and a flood of keys that each take the whole limit.
 */
class InMemoryEvictionAttackTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	@ParameterizedTest(name = "{0} keys, {1} pairs")
	@CsvSource({ "50, 64, 300", "1000, 512, 30" })
	void pairsOfNewKeysAlternatedAfterEachRequestBuyTheTargetNothing(int bound, int pairs, int rounds) {
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED, Algorithm.SLIDING_COUNTER,
				Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET }) {
			assertThat(pairsAttack(algorithm, bound, pairs, rounds)).as("%s at %d keys", algorithm, bound)
				.isLessThanOrEqualTo(10);
		}
	}

	/**
	 * The audit's bypass: {@code bound - 1} keys take the whole limit and are rejected once more (the highest rank);
	 * then each request on the target is followed by {@code pairs} pairs of new keys, each pair requested
	 * {@code x, y, x, y, x, y}, so that each is evicted, comes back and is evicted again.
	 * @return how many of the target's requests were admitted
	 */
	static int pairsAttack(MutableTimeSource clock, Algorithm algorithm, int bound, int pairs, int rounds) {
		RateLimitPolicy orders = RateLimitPolicy.builder("orders")
			.algorithm(algorithm)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.build();
		clock.alignTo(orders.window(), 0);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.clock(clock)
			.maxKeys(bound)
			.maxKeysPerPolicy(bound)
			.build();
		for (int i = 0; i < bound - 1; i++) {
			store.tryAcquire(orders, "fill-" + i, orders.capacity());
			store.tryAcquire(orders, "fill-" + i, 1);
		}
		int admitted = 0;
		int pair = 0;
		for (int round = 0; round < rounds; round++) {
			if (store.tryAcquire(orders, "victim", 1).allowed()) {
				admitted++;
			}
			for (int i = 0; i < pairs; i++, pair++) {
				for (int alternation = 0; alternation < 3; alternation++) {
					store.tryAcquire(orders, "x-" + pair, 1);
					store.tryAcquire(orders, "y-" + pair, 1);
				}
			}
		}
		return admitted;
	}

	private int pairsAttack(Algorithm algorithm, int bound, int pairs, int rounds) {
		return pairsAttack(this.clock, algorithm, bound, pairs, rounds);
	}

	/**
	 * The audit's lock-out: flood keys that each take the whole limit of {@code login}, 10 a minute; then 100 clients
	 * never seen send their first request, {@code holdsAfter} holds after the flood.
	 * @return how many of them were admitted
	 */
	static int floodThenNewClients(MutableTimeSource clock, Algorithm algorithm, int bound, int floodKeys,
			int holdsAfter) {
		RateLimitPolicy login = RateLimitPolicy.builder("login")
			.algorithm(algorithm)
			.limit(10)
			.window(Duration.ofMinutes(1))
			.build();
		clock.alignTo(login.window(), 0);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.clock(clock)
			.maxKeys(bound)
			.maxKeysPerPolicy(bound)
			.build();
		for (int i = 0; i < floodKeys; i++) {
			for (int request = 0; request < 10; request++) {
				store.tryAcquire(login, "flood-" + i, 1);
			}
		}
		clock.advanceMillis(holdsAfter * EvictedKeys.holdMillis(login));
		int admitted = 0;
		for (int i = 0; i < 100; i++) {
			if (store.tryAcquire(login, "new-client-" + i, 1).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

	@ParameterizedTest(name = "{0} keys, {1} flood keys")
	@CsvSource({ "50, 2000", "1000, 20000" })
	void aFloodOfKeysThatEachTakeTheWholeLimitTurnsNewClientsAwayForTwoHoldsAtMost(int bound, int floodKeys) {
		for (Algorithm algorithm : new Algorithm[] { Algorithm.FIXED, Algorithm.SLIDING_COUNTER,
				Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET }) {
			// The price of forgetting nothing (docs/reliability.md): measured, 0 of 100 while the flood counts.
			assertThat(floodThenNewClients(this.clock, algorithm, bound, floodKeys, 0)).as("%s during", algorithm)
				.isZero();
			assertThat(floodThenNewClients(this.clock, algorithm, bound, floodKeys, 2)).as("%s after", algorithm)
				.isEqualTo(100);
		}
	}

}
