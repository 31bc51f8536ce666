package io.github.ratelimit.memory;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.ConcurrentTestHarness;
import io.github.ratelimit.conformance.MutableTimeSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitStoreTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(3).window(Duration.ofMinutes(1)).build();

	@Test
	void aFloodOfAMillionKeysOnOnePolicyStaysWithinTheBoundsAndCostsAnotherPolicyNothing() {
		InMemoryRateLimitStore store = store(2_000, 1_000);
		RateLimitPolicy login = RateLimitPolicy.builder("login").limit(5).window(Duration.ofDays(1)).build();
		RateLimitPolicy api = RateLimitPolicy.builder("api").limit(10).window(Duration.ofDays(1)).build();
		for (int user = 0; user < 500; user++) {
			store.tryAcquire(api, "user-" + user, 1);
		}
		for (int i = 0; i < 1_000_000; i++) {
			store.tryAcquire(login, "flood-" + i, 1);
			if (store.size(login) > 1_000 || store.size() > 2_000) {
				throw new AssertionError("over the bounds after " + i + " keys: " + store.size(login) + " of the "
						+ "flooded policy, " + store.size() + " in all");
			}
		}
		assertThat(store.evictions()).as("each flood key beyond the bound evicts one").isEqualTo(999_000);
		assertThat(store.size(api)).as("the other policy lost no key").isEqualTo(500);
		assertThat(store.tryAcquire(api, "new-user", 1).remaining()).isEqualTo(9);
		for (int user = 0; user < 500; user++) {
			assertThat(store.tryAcquire(api, "user-" + user, 1).remaining()).isEqualTo(8);
		}
		// A million evictions raise the flooded policy's floor: a new client there pays for them until two holds
		// (here two days) after the flood.
		this.clock.advance(Duration.ofDays(2));
		assertThat(store.tryAcquire(login, "new-client", 1).remaining()).isEqualTo(4);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aFloodOfNewKeysNeverEvictsANearlyUsedUpClient(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(100, 100);
		RateLimitPolicy daily = policy("daily", algorithm, 10, Duration.ofDays(1));
		assertThat(store.tryAcquire(daily, "victim", 9).remaining()).isEqualTo(1);
		for (int i = 0; i < 100_000; i++) {
			store.tryAcquire(daily, "flood-" + i, 1);
		}
		assertThat(store.evictions()).isEqualTo(100_000 - 99);
		Decision last = store.tryAcquire(daily, "victim", 1);
		assertThat(last.allowed()).isTrue();
		assertThat(last.remaining()).isZero();
		assertThat(store.tryAcquire(daily, "victim", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void underALimitOfOneAFloodBuysNoUsedUpClientAFreshQuota(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(100, 100);
		RateLimitPolicy oneTimeCode = policy("otp", algorithm, 1, Duration.ofMinutes(10));
		assertThat(store.tryAcquire(oneTimeCode, "+15550100", 1).allowed()).isTrue(); // used up, never retried
		assertThat(store.tryAcquire(oneTimeCode, "+15550101", 1).allowed()).isTrue();
		assertThat(store.tryAcquire(oneTimeCode, "+15550101", 1).allowed()).as("used up and retried").isFalse();
		for (int i = 0; i < 100_000; i++) {
			store.tryAcquire(oneTimeCode, "flood-" + i, 1);
		}
		assertThat(store.tryAcquire(oneTimeCode, "+15550100", 1).allowed()).isFalse();
		assertThat(store.tryAcquire(oneTimeCode, "+15550101", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void afterATablesWorthOfEvictionsNearlyEveryNewClientStillFindsItsWholeQuota(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(1_000, 1_000);
		RateLimitPolicy oneTimeCode = policy("otp", algorithm, 1, Duration.ofMinutes(10));
		for (int i = 0; i < 2_000; i++) {
			store.tryAcquire(oneTimeCode, "flood-" + i, 1);
		}
		int admitted = 0;
		for (int i = 0; i < 100; i++) {
			if (store.tryAcquire(oneTimeCode, "new-client-" + i, 1).allowed()) {
				admitted++;
			}
		}
		// Each shares its four cells with keys of the 1,000 evicted with probability (1 - e^(-1000/2048))^4 < 2.4%.
		assertThat(admitted).isGreaterThanOrEqualTo(85);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aClientThatSendsANewKeyAfterEachRequestOnItsTargetGetsNoMoreThanTheLimit(Algorithm algorithm) {
		// The security review's attack: the table is full of keys used once; the target, used once, is the newest
		// key of the lowest rank, so the next new key evicts it.
		InMemoryRateLimitStore store = store(1_000, 1_000);
		RateLimitPolicy orders = policy("orders", algorithm, 10, Duration.ofMinutes(1));
		for (int i = 0; i < 1_100; i++) {
			store.tryAcquire(orders, "filler-" + i, 1);
		}
		AtomicInteger key = new AtomicInteger();
		int admitted = attack(store, orders, 300,
				(target) -> store.tryAcquire(orders, "one-use-" + key.getAndIncrement(), 1));
		assertThat(store.evictions()).isGreaterThan(300);
		assertThat(admitted).isEqualTo(10);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aClientThatWaitsForItsTargetToBeTheOldestKeyGetsNoMoreThanTheLimit(Algorithm algorithm) {
		// The attack on a store that would evict the oldest key first: a table's worth of new keys after each request.
		InMemoryRateLimitStore store = store(100, 100);
		RateLimitPolicy orders = policy("orders", algorithm, 10, Duration.ofMinutes(1));
		AtomicInteger key = new AtomicInteger();
		int admitted = attack(store, orders, 30, (target) -> {
			for (int i = 0; i < 150; i++) {
				store.tryAcquire(orders, "one-use-" + key.getAndIncrement(), 1);
			}
		});
		assertThat(admitted).isEqualTo(10);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aFloodThatOutranksItsTargetSoThatTheTargetGoesFirstStillBuysItNothing(Algorithm algorithm) {
		// Each new key holds more than the target, so the target is always the one on the lowest rank.
		InMemoryRateLimitStore store = store(50, 50);
		RateLimitPolicy orders = policy("orders", algorithm, 64, Duration.ofMinutes(1));
		AtomicInteger key = new AtomicInteger();
		int admitted = attack(store, orders, 200, (target) -> {
			for (int i = 0; i < 60; i++) {
				store.tryAcquire(orders, "heavy-" + key.getAndIncrement(), outranking(orders, target));
			}
		});
		assertThat(store.evictions()).isGreaterThan(1_000);
		assertThat(admitted).isLessThanOrEqualTo(64);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keysOfTheAttackerThatComeBackAsOftenAsTheTargetAndOutrankItStillBuyItNothing(Algorithm algorithm) {
		// The attacker's own keys are evicted and come back as often as the target, so that the memory of evicted
		// keys has to choose between them, and each holds more than the target, so that the target goes first.
		InMemoryRateLimitStore store = store(50, 50);
		RateLimitPolicy orders = policy("orders", algorithm, 64, Duration.ofMinutes(1));
		for (int pool : new int[] { 60, 200, 1_000 }) {
			store.clear();
			AtomicInteger key = new AtomicInteger();
			int admitted = attack(store, orders, 1_000, (target) -> {
				for (int i = 0; i < 60; i++) {
					store.tryAcquire(orders, "pool-" + (key.getAndIncrement() % pool), outranking(orders, target));
				}
			});
			assertThat(admitted).as("pool of %d", pool).isEqualTo(64);
		}
		assertThat(store.evictions()).isGreaterThan(50_000);
	}

	/**
	 * Send {@code rounds} requests of one unit on the target key, each followed by the attacker's other requests, at
	 * one instant.
	 * @return how many of the target's requests were admitted
	 */
	private static int attack(InMemoryRateLimitStore store, RateLimitPolicy policy, int rounds,
			Consumer<Decision> between) {
		int admitted = 0;
		for (int round = 0; round < rounds; round++) {
			Decision decision = store.tryAcquire(policy, "victim", 1);
			if (decision.allowed()) {
				admitted++;
			}
			between.accept(decision);
		}
		return admitted;
	}

	/** A cost that puts a key on a higher rank than the target holding what its last decision left it. */
	private static long outranking(RateLimitPolicy policy, Decision target) {
		return Math.min(policy.limit(), 2 * (policy.limit() - target.remaining()) + 2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void whatAFloodChargesUnknownClientsLapsesTwoHoldsAfterIt(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(50, 50);
		RateLimitPolicy orders = policy("orders", algorithm, 64, Duration.ofMinutes(1));
		this.clock.alignTo(orders.window(), 0);
		for (int i = 0; i < 200_000; i++) {
			store.tryAcquire(orders, "flood-" + i, 1);
		}
		this.clock.advanceMillis(2 * EvictedKeys.holdMillis(orders));
		long evicted = store.evictions();
		// As many new clients as the flood's expired keys leave room for: more would evict each other, and what
		// those evictions charge (the floor of the memory, by a random hash) is not the flood's.
		for (int i = 0; i < 50; i++) {
			assertThat(store.tryAcquire(orders, "new-client-" + i, 1).remaining()).isEqualTo(63);
		}
		assertThat(store.evictions()).isEqualTo(evicted);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void anEvictedKeyResumesWhereItWasUntilItsStateWouldHaveBeenFresh(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(10, 10);
		RateLimitPolicy policy = policy("p", algorithm, 5, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 0);
		store.tryAcquire(policy, "k", 2);
		for (int i = 0; i < 100; i++) {
			store.tryAcquire(policy, "heavy-" + i, 5); // each outranks k, which goes first
		}
		assertThat(store.size(policy)).isEqualTo(10);
		assertThat(store.peek(policy, "k").remaining()).as("k was evicted holding 2, at least").isLessThanOrEqualTo(3);
		assertThat(store.tryAcquire(policy, "k", 4).allowed()).as("2 held and 4 more are over 5").isFalse();
		// Once its state would have been fresh, nothing is held against it.
		this.clock.advanceMillis(EvictedKeys.holdMillis(policy) * 2);
		assertThat(store.tryAcquire(policy, "k", 1).remaining()).isEqualTo(4);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void readingAKeyInsertsNothingAndEvictsNoOne(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(3, 3);
		RateLimitPolicy policy = policy("p", algorithm, 5, Duration.ofMinutes(1));
		store.tryAcquire(policy, "a", 1);
		store.tryAcquire(policy, "b", 2);
		store.tryAcquire(policy, "c", 3);
		for (int i = 0; i < 10; i++) {
			assertThat(store.peek(policy, "unknown-" + i).remaining()).isEqualTo(5);
		}
		assertThat(store.peek(policy, "b").remaining()).isEqualTo(3);
		assertThat(store.peek(policy, "b").allowed()).isFalse();
		assertThat(store.size()).isEqualTo(3);
		assertThat(store.evictions()).isZero();
		assertThat(store.tryAcquire(policy, "a", 1).remaining()).isEqualTo(3);
		assertThat(store.peek(RateLimitPolicy.builder("never-used").limit(2).window(Duration.ofSeconds(1)).build(), "k")
			.remaining()).isEqualTo(2);
	}

	@Test
	void readingAnEvictedKeyShowsWhatItWouldResumeWith() {
		InMemoryRateLimitStore store = store(2, 2);
		store.tryAcquire(this.policy, "k", 2);
		store.tryAcquire(this.policy, "x", 3);
		store.tryAcquire(this.policy, "y", 3); // k goes
		assertThat(store.size(this.policy)).isEqualTo(2);
		assertThat(store.peek(this.policy, "k").remaining()).isEqualTo(1);
		assertThat(store.evictions()).isEqualTo(1);
	}

	@Test
	void aResetKeyStartsAfreshEvenWhenItsEvictionIsRemembered() {
		InMemoryRateLimitStore store = store(2, 2);
		store.tryAcquire(this.policy, "k", 3);
		store.tryAcquire(this.policy, "x", 3);
		store.tryAcquire(this.policy, "y", 3); // k goes, held 3 of 3
		assertThat(store.peek(this.policy, "k").remaining()).isZero();
		store.reset(this.policy, "k");
		assertThat(store.peek(this.policy, "k").remaining()).isEqualTo(3);
		assertThat(store.tryAcquire(this.policy, "k", 1).remaining()).isEqualTo(2);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void liveKeysKeepExactCountsWhileAFloodEvictsOthers(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(200, 200);
		RateLimitPolicy policy = policy("p", algorithm, 10, Duration.ofHours(1));
		for (int round = 0; round < 3; round++) {
			for (int user = 0; user < 100; user++) {
				store.tryAcquire(policy, "user-" + user, 1);
			}
		}
		for (int i = 0; i < 10_000; i++) {
			store.tryAcquire(policy, "flood-" + i, 1);
			if (i % 1_000 == 0) {
				store.tryAcquire(policy, "user-" + (i / 1_000), 2); // users keep deciding during the flood
			}
		}
		assertThat(store.evictions()).isEqualTo(10_000 - 100);
		for (int user = 0; user < 100; user++) {
			long used = (user < 10) ? 5 : 3;
			assertThat(store.tryAcquire(policy, "user-" + user, 1).remaining()).as("user-" + user)
				.isEqualTo(10 - used - 1);
		}
	}

	@Test
	void whenFullOfLiveKeysEvictsTheLeastUsedRatherThanRejecting() {
		InMemoryRateLimitStore store = store(2, 2);
		store.tryAcquire(this.policy, "alice", 3);
		store.tryAcquire(this.policy, "bob", 1);
		Decision stranger = store.tryAcquire(this.policy, "carol", 1);
		assertThat(stranger.allowed()).isTrue();
		assertThat(store.evictions()).isEqualTo(1);
		assertThat(store.tryAcquire(this.policy, "alice", 1).allowed()).as("alice's count is kept").isFalse();
		assertThat(store.tryAcquire(this.policy, "bob", 1).remaining()).as("bob, evicted, resumes where he was")
			.isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void expiredKeysAreReclaimedBeforeLiveOnesAndForgiveNothing(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(3, 3);
		RateLimitPolicy policy = policy("p", algorithm, 3, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 0);
		store.tryAcquire(policy, "heavy-1", 3);
		store.tryAcquire(policy, "heavy-2", 3);
		store.tryAcquire(policy, "light", 1);
		// Two windows on, the heavy keys are back to fresh; the light one, used again, is live with one unit held.
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(store.tryAcquire(policy, "light", 1).remaining()).isEqualTo(2);
		assertThat(store.tryAcquire(policy, "new-1", 1).allowed()).isTrue();
		assertThat(store.tryAcquire(policy, "new-2", 1).allowed()).isTrue();
		assertThat(store.evictions()).isZero();
		assertThat(store.size()).isEqualTo(3);
		Decision decision = store.tryAcquire(policy, "light", 2);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		assertThat(store.tryAcquire(policy, "light", 1).allowed()).isFalse();
	}

	@Test
	void whenTheTotalIsReachedTheLargestPolicyGivesUpItsLeastUsedKeys() {
		InMemoryRateLimitStore store = store(1_500, 1_000);
		RateLimitPolicy api = RateLimitPolicy.builder("api").limit(10).window(Duration.ofDays(1)).build();
		RateLimitPolicy login = RateLimitPolicy.builder("login").limit(5).window(Duration.ofDays(1)).build();
		for (int user = 0; user < 800; user++) {
			store.tryAcquire(api, "user-" + user, (user % 2 == 0) ? 3 : 1);
		}
		for (int i = 0; i < 100_000; i++) {
			store.tryAcquire(login, "flood-" + i, 1);
		}
		// The flood took keys from api only while api held more; those were keys that had held a single unit.
		assertThat(store.size(api)).isEqualTo(750);
		assertThat(store.size(login)).isEqualTo(750);
		assertThat(store.size()).isEqualTo(1_500);
		for (int user = 0; user < 800; user += 2) {
			assertThat(store.tryAcquire(api, "user-" + user, 1).remaining()).isEqualTo(6);
		}
	}

	@Test
	void aFloodOnOnePolicyEvictsNoKeyOfAnotherWhenThePerPolicyBoundsFitTheTotal() {
		InMemoryRateLimitStore store = store(10, 5);
		RateLimitPolicy other = RateLimitPolicy.builder("other").limit(3).window(Duration.ofMinutes(1)).build();
		for (int i = 0; i < 5; i++) {
			store.tryAcquire(other, "k-" + i, 1);
		}
		for (int i = 0; i < 1_000; i++) {
			store.tryAcquire(this.policy, "flood-" + i, 1);
		}
		assertThat(store.size(this.policy)).isEqualTo(5);
		for (int i = 0; i < 5; i++) {
			assertThat(store.tryAcquire(other, "k-" + i, 1).remaining()).isEqualTo(1);
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void retryAfterOfAFullStoreNeverExceedsTheWindowOrTwoForTheSlidingCounter(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(8, 8);
		RateLimitPolicy policy = policy("p", algorithm, 4, Duration.ofSeconds(10));
		// The sliding counter may wait for the next window to fade: up to two windows for a cost of the whole limit.
		long longest = (algorithm == Algorithm.SLIDING_COUNTER) ? 2 * policy.windowMillis() : policy.windowMillis();
		Random random = new Random(42);
		int rejected = 0;
		for (int step = 0; step < 20_000; step++) {
			this.clock.advanceMillis(random.nextInt(200));
			Decision decision = store.tryAcquire(policy, "key-" + random.nextInt(12), 1 + random.nextInt(4));
			if (!decision.allowed()) {
				rejected++;
				assertThat(decision.retryAfterMillis()).isBetween(1L, decision.resetAfterMillis());
				assertThat(decision.resetAfterMillis()).isLessThanOrEqualTo(longest);
			}
		}
		assertThat(rejected).isGreaterThan(1_000);
		assertThat(store.evictions()).isPositive();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentDecisionsDuringAFloodNeitherOverAdmitNorLeaveTheBounds(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(24, 16);
		List<RateLimitPolicy> policies = List.of(
				policy("a", algorithm, 1_000, Duration.ofDays(1)),
				policy("b", algorithm, 1_000, Duration.ofDays(1)));
		int hotKeys = 4;
		for (RateLimitPolicy policy : policies) {
			for (int hot = 0; hot < hotKeys; hot++) {
				store.tryAcquire(policy, "hot-" + hot, 2); // held 2 units: ranked above any flood key
			}
		}
		AtomicLongArray admitted = new AtomicLongArray(policies.size() * hotKeys);
		AtomicInteger threads = new AtomicInteger();
		ConcurrentTestHarness.run(4, () -> {
			int thread = threads.getAndIncrement();
			for (int i = 0; i < 50_000; i++) {
				int which = i % policies.size();
				RateLimitPolicy policy = policies.get(which);
				if (i % 3 == 0) {
					int hot = (i / 3 + thread) % hotKeys;
					if (store.tryAcquire(policy, "hot-" + hot, 1).allowed()) {
						admitted.incrementAndGet(which * hotKeys + hot);
					}
				}
				else {
					String key = "flood-" + thread + "-" + i;
					store.tryAcquire(policy, key, 1);
					if (i % 10 == 1) {
						store.reset(policy, key);
					}
				}
			}
		});
		for (int i = 0; i < admitted.length(); i++) {
			assertThat(admitted.get(i)).as("hot key %d", i).isEqualTo(1_000 - 2);
		}
		assertThat(store.size()).isBetween(1L, 24L);
		for (RateLimitPolicy policy : policies) {
			assertThat(store.size(policy)).isBetween(hotKeys + 0L, 16L);
			for (int hot = 0; hot < hotKeys; hot++) {
				assertThat(store.tryAcquire(policy, "hot-" + hot, 1).allowed()).isFalse();
			}
		}
		assertThat(store.evictions()).isPositive();
	}

	@Test
	void aResetKeyReleasesItsSlot() {
		InMemoryRateLimitStore store = store(10, 10);
		store.tryAcquire(this.policy, "k", 3);
		store.tryAcquire(this.policy, "other", 1);
		store.reset(this.policy, "k");
		assertThat(store.size()).isEqualTo(1);
		assertThat(store.size(this.policy)).isEqualTo(1);
		assertThat(store.evictions()).isZero();
		assertThat(store.tryAcquire(this.policy, "k", 1).remaining()).isEqualTo(2);
	}

	@Test
	void clearForgetsEveryKey() {
		InMemoryRateLimitStore store = store(10, 10);
		store.tryAcquire(this.policy, "k", 3);
		store.tryAcquire(this.policy, "other", 1);
		store.clear();
		assertThat(store.size()).isZero();
		assertThat(store.size(this.policy)).isZero();
		assertThat(store.tryAcquire(this.policy, "k", 1).remaining()).isEqualTo(2);
		assertThat(store.size()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void statesOfEveryAlgorithmExpireOnceBackToFresh(Algorithm algorithm) {
		InMemoryRateLimitStore store = store(10, 10);
		RateLimitPolicy policy = policy("p", algorithm, 3, Duration.ofSeconds(1));
		store.tryAcquire(policy, "k", 3);
		assertThat(store.purgeExpired()).isZero();
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(store.purgeExpired()).isEqualTo(1);
		assertThat(store.size()).isZero();
		assertThat(store.evictions()).isZero();
	}

	@Test
	void aNewKeyDropsAStateOnlyOnceItHasBeenBackToFreshForASecond() {
		InMemoryRateLimitStore store = store(10, 10);
		RateLimitPolicy bucket = policy("bucket", Algorithm.TOKEN_BUCKET, 10, Duration.ofMillis(100));
		store.tryAcquire(bucket, "returning", 1); // full again 10 ms later
		this.clock.advance(Duration.ofMillis(500));
		store.tryAcquire(bucket, "new-1", 1);
		assertThat(store.size()).as("a client whose bucket just refilled keeps its key").isEqualTo(2);
		this.clock.advance(Duration.ofMillis(600));
		store.tryAcquire(bucket, "new-2", 1);
		assertThat(store.size()).as("one back to fresh for a second is dropped").isEqualTo(2);
		assertThat(store.evictions()).isZero();
	}

	@Test
	void aPerPolicyBoundAboveTheTotalActsAsTheTotal() {
		InMemoryRateLimitStore store = store(10, 1_000);
		for (int i = 0; i < 100; i++) {
			store.tryAcquire(this.policy, "key-" + i, 1);
		}
		assertThat(store.size(this.policy)).isEqualTo(10);
	}

	@Test
	void byDefaultHoldsDefaultMaxKeysOfOnePolicy() {
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().clock(this.clock).build();
		for (long i = 0; i < InMemoryRateLimitStore.DEFAULT_MAX_KEYS + 10; i++) {
			store.tryAcquire(this.policy, "key-" + i, 1);
		}
		assertThat(InMemoryRateLimitStore.DEFAULT_MAX_KEYS_PER_POLICY)
			.isEqualTo(InMemoryRateLimitStore.DEFAULT_MAX_KEYS);
		assertThat(store.size()).isEqualTo(InMemoryRateLimitStore.DEFAULT_MAX_KEYS);
		assertThat(store.evictions()).isEqualTo(10);
	}

	@Test
	void aSecondWindowOfOnePolicyNameFailsTellingTheWayOutWhileAChangedLimitAndVariantsDoNot() {
		InMemoryRateLimitStore store = store(10, 10);
		store.tryAcquire(RateLimitPolicy.builder("exports").limit(2).window(Duration.ofMinutes(1)).build(), "a", 1);
		RateLimitPolicy other = RateLimitPolicy.builder("exports").limit(1_000).window(Duration.ofHours(1)).build();
		assertThatIllegalArgumentException().isThrownBy(() -> store.tryAcquire(other, "b", 1))
			.withMessageContaining("'exports' is already in use with FIXED, limit 2 per 1m")
			.withMessageContaining(".variant(tenant)");
		RateLimitPolicy raised = RateLimitPolicy.builder("exports").limit(3).window(Duration.ofMinutes(1)).build();
		assertThat(store.tryAcquire(raised, "a", 1).remaining()).as("a change, its count carried over").isEqualTo(1);
		assertThat(store.policies()).as("one table, counting under the change").isEqualTo(1);
		RateLimitPolicy big = RateLimitPolicy.builder("exports").variant("tenant-big").limit(1_000)
			.window(Duration.ofMinutes(1)).build();
		assertThat(store.tryAcquire(big, "tenant-big", 1).remaining()).isEqualTo(999);
	}

	@Test
	void policiesWhoseKeysAreAllGoneTakeNoRoomAndTheirNamesMayComeBackOtherwise() {
		InMemoryRateLimitStore store = store(100_000, 100_000);
		for (int tenant = 0; tenant < 2_000; tenant++) {
			RateLimitPolicy perTenant = RateLimitPolicy.builder("exports").variant("tenant-" + tenant).limit(5)
				.window(Duration.ofSeconds(1)).build();
			store.tryAcquire(perTenant, "tenant-" + tenant, 1);
		}
		assertThat(store.policies()).isEqualTo(2_000);
		this.clock.advance(Duration.ofSeconds(3));
		RateLimitPolicy other = policy("other", Algorithm.FIXED, 5, Duration.ofSeconds(1));
		for (int i = 0; i < 1_024; i++) {
			store.tryAcquire(other, "k-" + i, 1);
		}
		assertThat(store.policies()).isEqualTo(1);
		RateLimitPolicy changed = RateLimitPolicy.builder("exports").variant("tenant-7").limit(50)
			.window(Duration.ofSeconds(1)).build();
		assertThat(store.tryAcquire(changed, "tenant-7", 1).remaining()).isEqualTo(49);
	}

	@Test
	void aPolicyThatEvictedKeepsItsMemoryUntilNothingInItCounts() {
		InMemoryRateLimitStore store = store(2, 2);
		RateLimitPolicy policy = policy("p", Algorithm.FIXED, 5, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 0);
		store.tryAcquire(policy, "evicted", 3);
		store.tryAcquire(policy, "a", 4);
		store.tryAcquire(policy, "b", 4); // "evicted" goes, held 3
		store.reset(policy, "a");
		store.reset(policy, "b");
		assertThat(store.purgeExpired()).isZero();
		assertThat(store.policies()).as("empty, but it remembers what 'evicted' held").isEqualTo(1);
		assertThat(store.peek(policy, "evicted").remaining()).isEqualTo(2);
		this.clock.advance(policy.window());
		store.purgeExpired();
		assertThat(store.policies()).isZero();
	}

	@Test
	void rejectsACostBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> store(1, 1).tryAcquire(this.policy, "k", 0))
			.withMessage("'cost' must be at least 1 but was 0");
	}

	@Test
	void rejectsBoundsBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryRateLimitStore.builder().maxKeys(0))
			.withMessage("'maxKeys' must be at least 1 but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryRateLimitStore.builder().maxKeysPerPolicy(-5))
			.withMessage("'maxKeysPerPolicy' must be at least 1 but was -5");
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryRateLimitStore.create(0))
			.withMessage("'maxKeys' must be at least 1 but was 0");
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit).window(window).build();
	}

	private InMemoryRateLimitStore store(long maxKeys, long maxKeysPerPolicy) {
		return InMemoryRateLimitStore.builder()
			.clock(this.clock)
			.maxKeys(maxKeys)
			.maxKeysPerPolicy(maxKeysPerPolicy)
			.build();
	}

}
