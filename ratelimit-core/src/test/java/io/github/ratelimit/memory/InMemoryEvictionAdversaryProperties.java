package io.github.ratelimit.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An adversarial search over eviction: stores of 4 to 1,000 keys, every algorithm, and an attacker who, after each
 * request on its target, sends a schedule of its own built to make the store forget what the target used. Whatever
 * it sends, the target's admitted requests, replayed alone against a store that never evicts, all pass: evictions
 * give a key nothing beyond what the policy admits with unbounded memory. The keys held and the memory of evicted
 * keys stay within their documented bounds all along.
 */
class InMemoryEvictionAdversaryProperties {

	/** How the attacker fills the store between two requests on its target. */
	enum Schedule {

		/** Random keys, new and returning, random costs. */
		RANDOM,

		/** Pairs of new keys, each pair alternated: each key is evicted, comes back, and is evicted again. */
		PAIRS,

		/** New keys that each hold more than the target, so that the target is always the first to go. */
		RANK_RAISING,

		/** A pool of keys cycled in order, one to two and a half times the store, so that they keep coming back. */
		ROUND_ROBIN_POOL,

		/** Pairs, with the target's requests timed at the last and first millisecond of windows and refills. */
		WINDOW_EDGES

	}

	record Attack(Schedule schedule, Algorithm algorithm, int bound, int limit, int rounds, int spread, int repeats,
			long seed) {

		/** The attacker's keys per round: about {@code spread} tables' worth, at most 4,096. */
		int keysPerRound() {
			return Math.min(4_096, Math.max(2, this.bound * this.spread / 2));
		}

	}

	@Property(tries = 1000, seed = "5020261205")
	void noScheduleOfOtherKeysLetsATargetPassMoreThanThePolicyWouldWithUnboundedMemory(
			@ForAll("attacks") Attack attack) {
		MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");
		RateLimitPolicy policy = RateLimitPolicy.builder("orders")
			.algorithm(attack.algorithm())
			.limit(attack.limit())
			.window(Duration.ofSeconds(10))
			.build();
		clock.alignTo(policy.window(), 0);
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.clock(clock)
			.maxKeys(attack.bound())
			.maxKeysPerPolicy(attack.bound())
			.build();
		Random random = new Random(attack.seed());
		Map<String, List<long[]>> admitted = new HashMap<>();
		long window = policy.windowMillis();
		int next = 0;
		for (int round = 0; round < attack.rounds(); round++) {
			request(store, policy, "target", 1, clock, admitted);
			int keys = attack.keysPerRound();
			switch (attack.schedule()) {
				case RANDOM -> {
					for (int i = 0; i < keys * attack.repeats(); i++) {
						// Half the keys come back from a pool the size of the store; the other half are new.
						String key = random.nextBoolean() ? "pool-" + random.nextInt(attack.bound())
								: "new-" + next++;
						request(store, policy, key, 1 + random.nextInt(attack.limit()), clock, admitted);
					}
					clock.advanceMillis(random.nextInt(3) * random.nextLong(window / 4 + 1));
				}
				case PAIRS, WINDOW_EDGES -> {
					for (int pair = 0; pair < keys / 2; pair++, next++) {
						for (int alternation = 0; alternation < attack.repeats(); alternation++) {
							request(store, policy, "x-" + next, 1, clock, admitted);
							request(store, policy, "y-" + next, 1, clock, admitted);
						}
					}
					if (attack.schedule() == Schedule.WINDOW_EDGES) {
						// To the last millisecond of this window, the first of the next, or one refill of a unit on.
						long intoWindow = Math.floorMod(clock.currentTimeMillis(), window);
						long step = switch (random.nextInt(3)) {
							case 0 -> window - 1 - intoWindow;
							case 1 -> window - intoWindow;
							default -> Math.max(1, window / attack.limit());
						};
						clock.advanceMillis(step);
					}
				}
				case RANK_RAISING -> {
					long target = policy.capacity() - store.peek(policy, "target").remaining();
					long cost = Math.min(policy.capacity(), 2 * target + 2);
					for (int i = 0; i < keys; i++) {
						request(store, policy, "heavy-" + next++, cost, clock, admitted);
					}
				}
				case ROUND_ROBIN_POOL -> {
					int pool = Math.max(2, attack.bound() * (1 + attack.repeats()) / 2);
					for (int i = 0; i < keys; i++, next++) {
						request(store, policy, "pool-" + (next % pool), 1 + (next % attack.limit()), clock,
								admitted);
					}
				}
			}
			assertThat(store.size(policy)).isLessThanOrEqualTo(attack.bound());
		}
		if (attack.schedule() != Schedule.WINDOW_EDGES && attack.schedule() != Schedule.RANDOM) {
			assertThat(store.evictions()).as("the store evicted all along").isPositive();
		}
		// Fixed at the first eviction, whatever came after: at most 144 bytes per key of the bound, 3,328 at least.
		assertThat(store.evictedKeysBytes()).isLessThanOrEqualTo(Math.max(3_328L, 144L * (attack.bound() + 1)));
		for (String key : new String[] { "target", "pool-0", "pool-1", "x-0", "heavy-0" }) {
			assertAdmittedWithUnboundedMemory(policy, key, admitted.getOrDefault(key, List.of()));
		}
	}

	private static void request(InMemoryRateLimitStore store, RateLimitPolicy policy, String key, long cost,
			MutableTimeSource clock, Map<String, List<long[]>> admitted) {
		if (store.tryAcquire(policy, key, cost).allowed() && !key.startsWith("new-") && !key.startsWith("y-")) {
			admitted.computeIfAbsent(key, (k) -> new ArrayList<>()).add(new long[] { clock.currentTimeMillis(), cost });
		}
	}

	/** Replayed alone against a store that never evicts, each of a key's admitted requests passes. */
	static void assertAdmittedWithUnboundedMemory(RateLimitPolicy policy, String key, List<long[]> requests) {
		MutableTimeSource replayClock = MutableTimeSource.atMillis(0);
		InMemoryRateLimitStore unbounded = InMemoryRateLimitStore.builder().clock(replayClock).build();
		for (long[] request : requests) {
			replayClock.set(request[0]);
			assertThat(unbounded.tryAcquire(policy, key, request[1]).allowed())
				.as("%s admitted %s units at %s", key, request[1], request[0])
				.isTrue();
		}
	}

	@Provide
	Arbitrary<Attack> attacks() {
		Arbitrary<Integer> bounds = Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.integers().between(4, 64)),
				Tuple.of(2, Arbitraries.integers().between(65, 300)),
				Tuple.of(1, Arbitraries.integers().between(301, 1_000)));
		return Combinators
			.combine(Arbitraries.of(Schedule.class), Arbitraries.of(Algorithm.class), bounds,
					Arbitraries.integers().between(1, 16), Arbitraries.integers().between(10, 40),
					Arbitraries.integers().between(1, 6), Arbitraries.integers().between(1, 4), Arbitraries.longs())
			.as(Attack::new);
	}

}
