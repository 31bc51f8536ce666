package io.github.ratelimit.conformance;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.ResetListener;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour every {@link RateLimitStore} must have, for every {@link Algorithm}, driven by a controllable clock.
 * A store's test extends this class and says how to build the store on a given clock. Algorithms the store refuses
 * ({@link RateLimitStore#checkSupported}) are skipped.
 */
public abstract class RateLimitStoreConformanceTests {

	private static final AtomicInteger policies = new AtomicInteger();

	protected final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	protected RateLimitStore store;

	/**
	 * Create the store under test; it must take its time from {@code clock}.
	 */
	protected abstract RateLimitStore createStore(TimeSource clock);

	@BeforeEach
	void createStore() {
		this.store = createStore(this.clock);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsTheCapacityAtOnceThenRejects(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 30_000);
		for (int remaining = 4; remaining >= 0; remaining--) {
			Decision decision = take(policy, "k", 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(remaining);
			assertThat(decision.limit()).isEqualTo(5);
		}
		Decision rejected = take(policy, "k", 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMillis()).isPositive();
		assertThat(rejected.resetAfterMillis()).isGreaterThanOrEqualTo(rejected.retryAfterMillis());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void rejectedRequestTakesNothing(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 1_000);
		assertThat(take(policy, "k", 2).remaining()).isEqualTo(1);
		Decision rejected = take(policy, "k", 2);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		Decision last = take(policy, "k", 1);
		assertThat(last.allowed()).isTrue();
		assertThat(last.remaining()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void costAboveTheCapacityIsRejectedForeverAndTakesNothing(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 1_000);
		Decision rejected = take(policy, "k", 4);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.exceedsCapacity()).isTrue();
		assertThat(rejected.retryAfterMillis()).isEqualTo(Decision.NEVER);
		assertThat(rejected.remaining()).isEqualTo(3);
		assertThat(take(policy, "k", 3).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void costAboveOneTakesThatManyUnits(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 10, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 1_000);
		assertThat(take(policy, "k", 4).remaining()).isEqualTo(6);
		assertThat(take(policy, "k", 6).remaining()).isZero();
		assertThat(take(policy, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aResetKeyStartsAfreshAndOtherKeysAndPoliciesKeepTheirCounts(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy other = RateLimitPolicy.builder(policy.name() + "-other")
			.algorithm(algorithm)
			.limit(5)
			.window(Duration.ofMinutes(1))
			.build();
		this.clock.alignTo(policy.window(), 1_000);
		take(policy, "k", 5);
		take(policy, "neighbour", 2);
		take(other, "k", 3);
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		this.store.reset(policy, "k");
		assertThat(take(policy, "k", 1).remaining()).isEqualTo(4);
		assertThat(take(policy, "neighbour", 1).remaining()).isEqualTo(2);
		assertThat(take(other, "k", 1).remaining()).isEqualTo(1);
		this.store.reset(policy, "never-seen"); // nothing to forget: not an error
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void retryAfterIsExactlyWhenTheSameRequestPasses(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 4, Duration.ofSeconds(10));
		Random random = new Random(42);
		int checked = 0;
		for (int step = 0; step < 300; step++) {
			this.clock.advanceMillis(random.nextInt(3_000));
			long cost = 1 + random.nextInt(3);
			Decision decision = take(policy, "k", cost);
			if (decision.allowed()) {
				continue;
			}
			long retry = decision.retryAfterMillis();
			assertThat(retry).isPositive();
			if (retry > 1) {
				this.clock.advanceMillis(retry - 1);
				assertThat(take(policy, "k", cost).allowed()).as("one millisecond before the retry time").isFalse();
				this.clock.advanceMillis(1);
			}
			else {
				this.clock.advanceMillis(retry);
			}
			assertThat(take(policy, "k", cost).allowed()).as("at the retry time").isTrue();
			checked++;
		}
		assertThat(checked).isGreaterThan(20);
	}

	/**
	 * The effective window of draft 11: a client that uses every remaining unit at once gets nothing more until the
	 * next unit's time, and one unit then.
	 */
	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void nextUnitIsExactlyWhenMoreThanTheRemainingUnitsCanHavePassed(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 4, Duration.ofSeconds(10));
		Random random = new Random(11);
		for (int round = 0; round < 60; round++) {
			String key = "next-" + round;
			int requests = random.nextInt(5);
			for (int i = 0; i < requests; i++) {
				this.clock.advanceMillis(random.nextInt(3_000));
				take(policy, key, 1 + random.nextInt(2));
			}
			this.clock.advanceMillis(random.nextInt(3_000));
			Decision state = take(policy, key, policy.capacity() + 1); // reads without taking
			long next = state.nextUnitAfterMillis();
			assertThat(next).as("round %d", round).isPositive();
			if (state.remaining() > 0) {
				assertThat(take(policy, key, state.remaining()).allowed()).isTrue();
			}
			if (next > 1) {
				this.clock.advanceMillis(next - 1);
				assertThat(take(policy, key, 1).allowed()).as("round %d, before the next unit", round).isFalse();
				this.clock.advanceMillis(1);
			}
			else {
				this.clock.advanceMillis(next);
			}
			assertThat(take(policy, key, 1).allowed()).as("round %d, at the next unit", round).isTrue();
			this.clock.advance(Duration.ofSeconds(60));
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void resetAfterIsExactlyWhenTheFullCapacityIsBack(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 4, Duration.ofSeconds(10));
		Random random = new Random(7);
		int checked = 0;
		for (int round = 0; round < 40; round++) {
			String early = "early-" + round;
			String onTime = "on-time-" + round;
			Decision decision = null;
			int requests = 1 + random.nextInt(4);
			for (int i = 0; i < requests; i++) {
				this.clock.advanceMillis(random.nextInt(2_000));
				decision = take(policy, early, 1);
				assertThat(take(policy, onTime, 1)).isEqualTo(decision);
			}
			long reset = decision.resetAfterMillis();
			assertThat(reset).isPositive();
			this.clock.advanceMillis(reset - 1);
			assertThat(take(policy, early, 1).remaining()).as("before the reset").isLessThan(policy.capacity() - 1);
			this.clock.advanceMillis(1);
			assertThat(take(policy, onTime, 1).remaining()).as("at the reset").isEqualTo(policy.capacity() - 1);
			checked++;
			this.clock.advance(Duration.ofSeconds(30));
		}
		assertThat(checked).isEqualTo(40);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void idleLongerThanTheWindowRestoresTheFullCapacity(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofSeconds(1));
		this.clock.alignTo(policy.window(), 500);
		takeUntilRejected(policy, "k");
		this.clock.advance(Duration.ofHours(25));
		for (int i = 0; i < 5; i++) {
			assertThat(take(policy, "k", 1).allowed()).isTrue();
		}
		assertThat(take(policy, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void clockRunningBackwardsCreatesNoCapacity(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofSeconds(10));
		this.clock.alignTo(policy.window(), 9_000);
		takeUntilRejected(policy, "k");
		this.clock.advanceMillis(-5_000);
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		this.clock.advanceMillis(-60_000);
		assertThat(take(policy, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void manyKeysAreCountedIndependently(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
		this.clock.alignTo(policy.window(), 1_000);
		for (int key = 0; key < 300; key++) {
			assertThat(take(policy, "key-" + key, 2).allowed()).isTrue();
		}
		for (int key = 0; key < 300; key++) {
			assertThat(take(policy, "key-" + key, 1).remaining()).isZero();
			assertThat(take(policy, "key-" + key, 1).allowed()).isFalse();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void policiesWithTheSameKeyAreCountedIndependently(Algorithm algorithm) {
		RateLimitPolicy first = policy(algorithm, 2, Duration.ofMinutes(1));
		RateLimitPolicy second = policy(algorithm, 2, Duration.ofMinutes(1));
		this.clock.alignTo(first.window(), 1_000);
		takeUntilRejected(first, "k");
		assertThat(take(second, "k", 2).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void steadyTrafficBelowTheRateIsAlwaysAdmitted(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 10, Duration.ofSeconds(1));
		long period = 112; // 8.9 requests per second against a limit of 10
		for (int i = 0; i < 400; i++) {
			assertThat(take(policy, "k", 1).allowed()).as("request %d", i).isTrue();
			this.clock.advanceMillis(period);
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void longRunsDoNotDrift(Algorithm algorithm) {
		// 7 per 3s: a rate that is not a whole number of units per millisecond.
		assertLongRunAdmitsTheRate(policy(algorithm, 7, Duration.ofSeconds(3)), 300, 100, 1);
		// A prime limit per day over 200 days: large numbers, same exactness (beyond what a sliding log may keep).
		if (!algorithm.keepsLog()) {
			assertLongRunAdmitsTheRate(policy(algorithm, 1_000_003, Duration.ofDays(1)), 200, 3_600_000, 100_000);
		}
	}

	private void assertLongRunAdmitsTheRate(RateLimitPolicy policy, int allWindows, long period, long cost) {
		int windows = Math.max(10, (int) Math.round(allWindows * longRunShare()));
		this.clock.alignTo(policy.window(), 0);
		long start = this.clock.currentTimeMillis();
		long end = start + windows * policy.windowMillis();
		long admitted = 0;
		while (this.clock.currentTimeMillis() < end) {
			if (take(policy, "k", cost).allowed()) {
				admitted += cost;
			}
			this.clock.advanceMillis(period);
		}
		long expected = windows * policy.limit();
		// Overloaded at least 2x: every algorithm admits its rate over the run, give or take one window's units
		// (the buckets start full) and one request. The sliding counter under steady overload settles one request
		// short of the limit per window: its estimate still weighs the previous window an instant before the edge.
		long lowest = (policy.algorithm() == Algorithm.SLIDING_COUNTER) ? windows * (policy.limit() - cost) : expected;
		assertThat(admitted).as(policy.toString())
			.isBetween(lowest - policy.limit() - cost, expected + policy.capacity() + cost);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentRequestsAtOneInstantAdmitExactlyTheCapacity(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 100, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		AtomicLong admitted = new AtomicLong();
		ConcurrentTestHarness.run(32, () -> {
			for (int i = 0; i < 10; i++) {
				if (take(policy, "hot", 1).allowed()) {
					admitted.incrementAndGet();
				}
			}
		});
		assertThat(admitted).hasValue(100);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void boundaryBurstStaysWithinTheAlgorithmsBoundAndReachesIt(Algorithm algorithm) {
		BoundaryBurst.Result result = BoundaryBurst.measure(algorithm, this::take, this.clock, nextName(algorithm));
		assertThat(result.maxInAnyWindow()).as(result.toString()).isLessThanOrEqualTo(result.bound());
		assertThat(result.maxInAnyWindow()).as(result.toString()).isEqualTo(result.reachable());
		System.out.println(getClass().getSimpleName() + ": " + result);
	}

	/**
	 * Several instances leasing blocks of one hot key (each a limiter of its own over the shared store) never admit
	 * more than the capacity between them, under concurrency; what they strand is at most the blocks the others hold,
	 * and every admission but one per block is answered without a store call.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void leasedBlocksOfSeveralInstancesNeverAdmitMoreThanTheCapacity(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 100, Duration.ofMinutes(1)).toBuilder().lease(10).build();
		assumeShared(policy);
		this.clock.alignTo(policy.window(), 1_000);
		AtomicLong calls = new AtomicLong();
		List<RateLimiter> instances = List.of(instance(calls), instance(calls), instance(calls));
		AtomicLong admitted = new AtomicLong();
		AtomicInteger next = new AtomicInteger();
		ConcurrentTestHarness.run(24, () -> {
			RateLimiter instance = instances.get(next.getAndIncrement() % instances.size());
			for (int i = 0; i < 20; i++) {
				if (decide(instance, policy, "hot").allowed()) {
					admitted.incrementAndGet();
				}
			}
		});
		assertThat(admitted.get()).isLessThanOrEqualTo(100).isGreaterThanOrEqualTo(100 - (instances.size() - 1) * 10);
		// A block per 10 admissions, and a block asked by each thread that found its instance's block empty at once;
		// near the end, per instance, a smaller block or a request of its own, then the rejection its deny cache keeps.
		assertThat(calls.get()).isLessThan(admitted.get());
	}

	/**
	 * The same instances, under concurrency, while the clock moves: rounds of 12 threads racing over the instances,
	 * the clock stepped between rounds (by up to 2 s, or a few ms), so that windows end, buckets refill and blocks
	 * lapse between one concurrent round and the next, and auto-sized blocks grow and shrink. What they admit together
	 * stays within the algorithm's bound, as a single store would: per window for the windows, and for the buckets in
	 * every span of time at most the burst and the refill over the span.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void leasingInstancesUnderConcurrencyWithAMovingClockStayWithinTheAlgorithmsBound(Algorithm algorithm) {
		for (long lease : new long[] { 8, RateLimitPolicy.LEASE_AUTO }) {
			RateLimitPolicy policy = RateLimitPolicy.builder(nextName(algorithm)).algorithm(algorithm).limit(40)
				.window(Duration.ofSeconds(10)).burst(algorithm.isBucket() ? 20L : null).lease(lease).build();
			assumeShared(policy);
			this.clock.alignTo(policy.window(), 0);
			List<RateLimiter> instances = List.of(instance(new AtomicLong()), instance(new AtomicLong()),
					instance(new AtomicLong()));
			Random random = new Random(algorithm.ordinal() * 31 + lease);
			List<long[]> rounds = new ArrayList<>(); // the round's time, and what it admitted
			AtomicInteger next = new AtomicInteger();
			for (int round = 0; round < 40; round++) {
				this.clock.advanceMillis(random.nextInt(3) == 0 ? random.nextInt(2_000) : random.nextInt(50));
				AtomicLong admitted = new AtomicLong();
				ConcurrentTestHarness.run(12, () -> {
					RateLimiter instance = instances.get(next.getAndIncrement() % instances.size());
					for (int i = 0; i < 2; i++) {
						admitted.addAndGet(decide(instance, policy, "k").allowed() ? 1 : 0);
					}
				});
				rounds.add(new long[] { this.clock.currentTimeMillis(), admitted.get() });
			}
			long window = policy.windowMillis();
			long total = rounds.stream().mapToLong((round) -> round[1]).sum();
			assertThat(total).as("lease %d: at least a window's limit", lease).isGreaterThanOrEqualTo(40);
			for (int a = 0; a < rounds.size(); a++) {
				long count = 0;
				for (int b = a; b < rounds.size(); b++) {
					count += rounds.get(b)[1];
					long from = rounds.get(a)[0];
					long span = rounds.get(b)[0] - from;
					if (algorithm.isBucket()) {
						assertThat(count * window).as("lease %d: admitted in %d ms from %d", lease, span, from)
							.isLessThanOrEqualTo(policy.burst() * window + policy.limit() * span);
					}
					else if (from / window == rounds.get(b)[0] / window) {
						assertThat(count).as("lease %d: admitted in the window from %d", lease, from)
							.isLessThanOrEqualTo(policy.limit());
					}
				}
			}
		}
	}

	/** What a leasing instance holds and does not use is what the others miss: never more than its block. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void anIdleHoldersUnusedBlockIsAllTheOthersMissAndItLapsesWithTheWindowOrRefill(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 100, Duration.ofMinutes(1)).toBuilder().lease(10).build();
		assumeShared(policy);
		this.clock.alignTo(policy.window(), 1_000);
		RateLimiter holder = instance(new AtomicLong());
		RateLimiter other = instance(new AtomicLong());
		// A bucket's first request asks for its own unit (a block taken from a full bucket would lapse at once).
		assertThat(decide(holder, policy, "hot").allowed()).isTrue();
		assertThat(decide(holder, policy, "hot").allowed()).isTrue(); // from a block of 10 by now
		long missed = 100 - 2 - drain(other, policy, "hot");
		assertThat(missed).as("the holder's unused units").isBetween(8L, 9L);
		// The holder crashes: its 9 units are lost until its block's window ends (or the bucket refills them).
		this.clock.advance(policy.window().multipliedBy(2));
		assertThat(drain(other, policy, "hot")).isEqualTo(100);
	}

	/** A reset drops this instance's block, and a unit given back returns to the block it came from. */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void aResetDropsTheInstancesBlockAndUnitsGivenBackReturnToIt(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 30, Duration.ofMinutes(1)).toBuilder().lease(10).build();
		assumeShared(policy);
		this.clock.alignTo(policy.window(), 1_000);
		AtomicLong calls = new AtomicLong();
		RateLimiter holder = instance(calls);
		Admission first = holder.tryAcquireAll(List.of(new Acquisition(policy, "k", 1)));
		assertThat(first.allowed()).isTrue();
		long callsForTheBlock = calls.get();
		first.refund(0);
		assertThat(drain(holder, policy, "k")).isEqualTo(30); // the unit given back was admitted again
		holder.reset(policy, "k");
		RateLimiter other = instance(new AtomicLong());
		// Where resets are also told to the other instances, the message can reach this one after it took its
		// block, which it then drops: a block less at most, never more.
		assertThat(drain(other, policy, "k")).isBetween(30L - 10, 30L);
		assertThat(decide(holder, policy, "k").allowed()).isFalse(); // its dropped block admits nothing
		assertThat(callsForTheBlock).isEqualTo(1);
	}

	/**
	 * A reset through one instance reaches the others' blocks too, once its best-effort message arrives (Redis pub/sub,
	 * DynamoDB's poll about once a second): until then the holder admits from its block, after it the block is dropped
	 * and the holder asks the store, long before the block would have run out. A reset made before the holder
	 * listens (its subscription is made in the background) is not heard of: its block then lives out its time.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "FIXED")
	void aResetThroughOneInstanceDropsTheOtherInstancesBlockOnceItsMessageArrives(Algorithm algorithm)
			throws InterruptedException {
		RateLimitPolicy policy = policy(algorithm, 1_000, Duration.ofMinutes(1)).toBuilder().lease(200).build();
		assumeShared(policy);
		this.clock.alignTo(policy.window(), 1_000);
		RateLimiter holder = instance(new AtomicLong());
		RateLimiter other = instance(new AtomicLong());
		// The holder subscribes to resets in the background from its start: a reset before that is not heard of.
		boolean listening = false;
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!listening && System.nanoTime() < deadline) {
			decide(holder, policy, "warm-up");
			other.reset(policy, "warm-up");
			Thread.sleep(100);
			listening = decide(holder, policy, "warm-up").origin() != Decision.Origin.LEASE;
		}
		assertThat(listening).as("the holder hears of resets").isTrue();
		assertThat(decide(holder, policy, "k").origin()).isEqualTo(Decision.Origin.STORE); // a block of 200
		other.reset(policy, "k");
		long fromTheOldBlock = 0;
		Decision decision = decide(holder, policy, "k");
		while (decision.origin() == Decision.Origin.LEASE && fromTheOldBlock < 199) {
			fromTheOldBlock++;
			Thread.sleep(50); // 199 units last 10 s: the message's time to arrive
			decision = decide(holder, policy, "k");
		}
		assertThat(fromTheOldBlock).as("admitted from the old block before the message").isLessThan(199);
		assertThat(decision.origin()).isEqualTo(Decision.Origin.STORE);
	}

	/**
	 * Whatever the order of requests and pauses over several leasing instances, what they admit together stays within
	 * the algorithm's bound, as a single store would: per window for the windows, and for the buckets in every span
	 * of time at most the burst and the refill over the span (the blocks' units are admitted only while the bucket
	 * could not have refilled past its burst without them).
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void leasingInstancesInAnyOrderOfRequestsAndPausesStayWithinTheAlgorithmsBound(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.builder(nextName(algorithm)).algorithm(algorithm).limit(40)
			.window(Duration.ofSeconds(10)).burst(algorithm.isBucket() ? 20L : null).lease(8).build();
		assumeShared(policy);
		this.clock.alignTo(policy.window(), 0);
		List<RateLimiter> instances = List.of(instance(new AtomicLong()), instance(new AtomicLong()),
				instance(new AtomicLong()));
		Random random = new Random(algorithm.ordinal());
		List<Long> admittedAt = new ArrayList<>();
		for (int step = 0; step < 300; step++) {
			this.clock.advanceMillis(random.nextInt(4) == 0 ? random.nextInt(2_000) : random.nextInt(50));
			if (decide(instances.get(random.nextInt(instances.size())), policy, "k").allowed()) {
				admittedAt.add(this.clock.currentTimeMillis());
			}
		}
		assertThat(admittedAt).hasSizeGreaterThan(40);
		long window = policy.windowMillis();
		for (int a = 0; a < admittedAt.size(); a++) {
			for (int b = a; b < admittedAt.size(); b++) {
				long count = b - a + 1;
				long span = admittedAt.get(b) - admittedAt.get(a);
				if (algorithm.isBucket()) {
					assertThat(count * window).as("admitted in %d ms from %d", span, admittedAt.get(a))
						.isLessThanOrEqualTo(policy.burst() * window + policy.limit() * span);
				}
				else if (admittedAt.get(a) / window == admittedAt.get(b) / window) {
					assertThat(count).as("admitted in the window from %d", admittedAt.get(a))
						.isLessThanOrEqualTo(policy.limit());
				}
			}
		}
	}

	/**
	 * A request that a later limit rejects gives back what its leased limit took, and nothing of what the store's own
	 * call gave back already: the other limits keep counting exactly.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_LOG", "CONCURRENCY" }, mode = EnumSource.Mode.EXCLUDE)
	void aRequestRejectedByAnotherLimitGivesBackWhatItsLeaseTookAndNothingTwice(Algorithm algorithm) {
		RateLimitPolicy leased = policy(algorithm, 100, Duration.ofMinutes(1)).toBuilder().lease(10).build();
		RateLimitPolicy counted = policy(algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy exhausted = policy(algorithm, 1, Duration.ofMinutes(1));
		assumeShared(leased);
		this.clock.alignTo(leased.window(), 1_000);
		RateLimiter instance = RateLimiter.builder(this.store).clock(this.clock).denyCache(false).build();
		assertThat(instance.tryAcquire(counted, "k").allowed()).isTrue();
		assertThat(instance.tryAcquire(exhausted, "k").allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			Admission rejected = instance.tryAcquireAll(List.of(new Acquisition(leased, "k", 1),
					new Acquisition(counted, "k", 1), new Acquisition(exhausted, "k", 1)));
			assertThat(rejected.allowed()).isFalse();
		}
		long admitted = 0;
		for (int i = 0; i < 10; i++) {
			admitted += instance.tryAcquire(counted, "k").allowed() ? 1 : 0;
		}
		assertThat(admitted).as("what the counted limit had left").isEqualTo(4);
		long leasedAdmitted = 0;
		for (int i = 0; i < 200; i++) {
			leasedAdmitted += instance.tryAcquire(leased, "k").allowed() ? 1 : 0;
		}
		assertThat(leasedAdmitted).as("the leased limit, all its units back").isEqualTo(100);
	}

	private RateLimiter instance(AtomicLong calls) {
		return RateLimiter.builder(new CountedStore(this.store, calls)).clock(this.clock).build();
	}

	private Decision decide(RateLimiter instance, RateLimitPolicy policy, String key) {
		List<Acquisition> acquisition = List.of(new Acquisition(policy, key, 1));
		Admission admission = nonBlocking() ? join(instance.tryAcquireAllAsync(acquisition))
				: instance.tryAcquireAll(acquisition);
		return Objects.requireNonNull(admission.decision(0));
	}

	private long drain(RateLimiter instance, RateLimitPolicy policy, String key) {
		long admitted = 0;
		for (int i = 0; i < 2 * policy.capacity(); i++) {
			admitted += decide(instance, policy, key).allowed() ? 1 : 0;
		}
		return admitted;
	}

	private void assumeShared(RateLimitPolicy policy) {
		assumeSupported(policy);
		Assumptions.assumeFalse(this.store.isLocal(), "a store in this process leases nothing");
	}

	/**
	 * Return whether this run asks the store through its non-blocking methods
	 * ({@link RateLimitStore#tryAcquireAllAsync}, {@link RateLimitStore#refundAllAsync}) instead of its blocking
	 * ones: a store's test runs the suite both ways.
	 */
	protected boolean nonBlocking() {
		return false;
	}

	/**
	 * Return the share of the long runs ({@code longRunsDoNotDrift}) this store's suite runs: 1, unless every
	 * request is so slow on its test server that a shorter run, still of many windows, must do.
	 */
	protected double longRunShare() {
		return 1.0;
	}

	protected final Decision take(RateLimitPolicy policy, String key, long cost) {
		assumeSupported(policy);
		Decision decision = nonBlocking()
				? acquireAll(List.of(new Acquisition(policy, key, cost))).decisions().get(0)
				: this.store.tryAcquire(policy, key, cost);
		assertThat(decision.remaining()).isNotNegative();
		assertThat(decision.resetAfterMillis()).isNotNegative();
		return decision;
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void variantsOfAPolicyCountApartEvenWithEqualLimits(Algorithm algorithm) {
		RateLimitPolicy declared = policy(algorithm, 2, Duration.ofMinutes(1));
		RateLimitPolicy gold = declared.toBuilder().variant("gold").build();
		RateLimitPolicy odd = declared.toBuilder().variant("g:o{l}d%").build();
		assumeSupported(declared);
		this.clock.alignTo(declared.window(), 1_000);
		for (RateLimitPolicy variant : List.of(declared, gold, odd)) {
			assertThat(take(variant, "k", 2).allowed()).as(variant.toString()).isTrue();
			assertThat(take(variant, "k", 1).allowed()).as(variant.toString()).isFalse();
		}
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER", "SLIDING_LOG" })
	void aRaisedLimitAdmitsOnlyTheDifferenceWithinTheWindow(Algorithm algorithm) {
		RateLimitPolicy five = policy(algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy eight = five.toBuilder().limit(8).build();
		assumeSupported(five);
		this.clock.alignTo(five.window(), 1_000);
		for (int i = 0; i < 5; i++) {
			assertThat(take(five, "k", 1).allowed()).isTrue();
		}
		assertThat(take(five, "k", 1).allowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		Decision first = take(eight, "k", 1);
		assertThat(first.allowed()).as("the change carries the 5 counted over").isTrue();
		assertThat(first.remaining()).isEqualTo(2);
		assertThat(take(eight, "k", 2).allowed()).isTrue();
		assertThat(take(eight, "k", 1).allowed()).as("3 more, not 8").isFalse();
		assertThat(take(eight, "other", 8).allowed()).as("a key unseen before the change").isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER", "SLIDING_LOG" })
	void aLoweredLimitRejectsUntilTheWindowHasRoomUnderIt(Algorithm algorithm) {
		RateLimitPolicy five = policy(algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy three = five.toBuilder().limit(3).build();
		assumeSupported(five);
		this.clock.alignTo(five.window(), 1_000);
		for (int i = 0; i < 4; i++) {
			assertThat(take(five, "k", 1).allowed()).isTrue();
		}
		Decision lowered = take(three, "k", 1);
		assertThat(lowered.allowed()).as("4 counted, limit 3").isFalse();
		assertThat(lowered.remaining()).isZero();
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(take(three, "k", 1).allowed()).as("the same window").isFalse();
		this.clock.advance(Duration.ofMinutes(2));
		for (int i = 0; i < 3; i++) {
			assertThat(take(three, "k", 1).allowed()).as("a later window, under the new limit").isTrue();
		}
		assertThat(take(three, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aChangedBucketKeepsItsLevelClampedToTheNewBurst(Algorithm algorithm) {
		RateLimitPolicy ten = policy(algorithm, 10, Duration.ofMinutes(1));
		assumeSupported(ten);
		this.clock.alignTo(ten.window(), 1_000);
		assertThat(take(ten, "k", 4).remaining()).isEqualTo(6);
		RateLimitPolicy twenty = ten.toBuilder().limit(20).burst(20L).build();
		Decision raised = take(twenty, "k", 1);
		assertThat(raised.allowed()).isTrue();
		assertThat(raised.remaining()).as("4 used of 20, one more taken: as a window keeps its count").isEqualTo(15);
		RateLimitPolicy three = ten.toBuilder().limit(3).burst(3L).build();
		Decision lowered = take(three, "k", 1);
		assertThat(lowered.allowed()).as("5 used, clamped to a burst of 3").isFalse();
		assertThat(lowered.remaining()).isZero();
		this.clock.advance(Duration.ofSeconds(20)); // one token at 3 a minute
		assertThat(take(three, "k", 1).allowed()).as("refilled at the new rate").isTrue();
		assertThat(take(three, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aCostChargedAfterTheResponsePutsTheKeyInDebtUntilRepaid(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		long countedAt = this.clock.currentTimeMillis();
		assertThat(take(policy, "k", 2).allowed()).isTrue();
		// It cost 8, not the 2 it reserved: 6 more, beyond the limit of 5.
		this.store.charge(new Acquisition(policy, "k", 6), countedAt);
		Decision inDebt = take(policy, "k", 1);
		assertThat(inDebt.allowed()).isFalse();
		assertThat(inDebt.remaining()).isZero();
		assertThat(take(policy, "other", 5).allowed()).as("another key owes nothing").isTrue();
		this.clock.advance(Duration.ofSeconds(30));
		assertThat(take(policy, "k", 1).allowed()).as("still in debt in the window").isFalse();
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(take(policy, "k", 1).allowed()).as("repaid").isTrue();
	}

	/**
	 * A bucket's debt is repaid by its refill, and its rejections say exactly when: what a penalty group's lock-out,
	 * a bucket of a million a second charged an hour of its refill, relies on.
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void aBucketInDebtSaysHowLongItsRefillTakesToRepayIt(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
		assumeSupported(policy);
		long countedAt = this.clock.currentTimeMillis();
		assertThat(take(policy, "k", 2).allowed()).isTrue();
		this.store.charge(new Acquisition(policy, "k", 6), countedAt);
		Decision inDebt = take(policy, "k", 1);
		assertThat(inDebt.allowed()).isFalse();
		assertThat(inDebt.retryAfterMillis()).as("3 tokens owed and 1 to take, at one per 12 s").isEqualTo(48_000);
		assertThat(inDebt.resetAfterMillis()).as("8 tokens used of 5").isEqualTo(96_000);
		RateLimitPolicy lock = RateLimitPolicy.builder("lock-" + algorithm)
			.algorithm(algorithm)
			.limit(1_000_000)
			.window(Duration.ofSeconds(1))
			.burst(1_000_000L)
			.build();
		countedAt = this.clock.currentTimeMillis();
		Decision taken = take(lock, "k", 999_000);
		assertThat(taken.allowed()).isTrue();
		this.store.charge(new Acquisition(lock, "k", taken.remaining() + 3_600_000_000L - 1), countedAt);
		Decision lockedOut = take(lock, "k", 1);
		assertThat(lockedOut.allowed()).isFalse();
		assertThat(lockedOut.retryAfterMillis()).isEqualTo(3_600_000);
		this.clock.advance(Duration.ofHours(1).minusMillis(1));
		assertThat(take(lock, "k", 1).allowed()).isFalse();
		this.clock.advanceMillis(1);
		assertThat(take(lock, "k", 1).allowed()).as("an hour after the take").isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aChargeForAnAdmissionWhoseWindowHasPassedTakesNothingNow(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 5, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		long countedAt = this.clock.currentTimeMillis();
		assertThat(take(policy, "k", 1).allowed()).isTrue();
		this.clock.advance(Duration.ofMinutes(3));
		this.store.charge(new Acquisition(policy, "k", 4), countedAt);
		assertThat(take(policy, "k", 5).allowed()).isTrue();
	}

	/**
	 * Requests in flight together, each holding only its estimate, settled one by one with a rejected request among
	 * the settlements: every charge and refund lands whatever the rejection did to the key's state (a Redis log
	 * merges the oldest entries of a key in debt when it rejects).
	 */
	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentReservationsSettledAroundARejectionKeepEveryCharge(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 10, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		long[] reserved = { 1, 1, 1, 3 };
		long[] countedAt = new long[reserved.length];
		for (int i = 0; i < reserved.length; i++) {
			Reservation admitted = acquireAll(List.of(new Acquisition(policy, "k", reserved[i])));
			assertThat(admitted.allowed()).isTrue();
			countedAt[i] = admitted.countedAt(0);
			this.clock.advanceMillis(1);
		}
		// The third cost 7: 12 of 10 used.
		this.store.charge(new Acquisition(policy, "k", 6), countedAt[2]);
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		// The fourth cost nothing, the first 3: 11 of 10 used.
		refund(new Acquisition(policy, "k", 3), countedAt[3]);
		this.store.charge(new Acquisition(policy, "k", 2), countedAt[0]);
		this.clock.advanceMillis(1);
		assertThat(take(policy, "k", 1).allowed()).as("still in debt").isFalse();
		this.clock.advance(Duration.ofMinutes(3));
		assertThat(take(policy, "k", 10).allowed()).as("repaid").isTrue();
	}

	/**
	 * The worst case of estimates reserved concurrently (documented in docs/usage.md): requests in flight together each
	 * reserve only the estimate, so at most {@code L / e} of them pass at once, and each may then cost far more. A
	 * limit of 1,000 with estimates of 100 admits 10; at 1,000 each they use 10,000, 9,000 over the limit, and the
	 * debt then rejects every request: a bucket's until the refill repays it (9 minutes at 1,000 a minute), a sliding
	 * log's until the admissions leave the window (one window, after which the same can happen again).
	 */
	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET", "SLIDING_LOG" })
	void concurrentEstimatesGoOverByTheirCountTimesTheirShortfallAndTheDebtStopsTheKeyUntilRepaid(
			Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 1_000, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		List<Long> admittedAt = java.util.Collections.synchronizedList(new ArrayList<>());
		ConcurrentTestHarness.run(32, () -> {
			Reservation reservation = acquireAll(List.of(new Acquisition(policy, "k", 100)));
			if (reservation.allowed()) {
				admittedAt.add(reservation.countedAt(0));
			}
		});
		assertThat(admittedAt).as("L / e in flight at once").hasSize(10);
		ConcurrentTestHarness.run(admittedAt.size(), () -> {
			long countedAt;
			synchronized (admittedAt) {
				countedAt = admittedAt.remove(0);
			}
			this.store.charge(new Acquisition(policy, "k", 900), countedAt);
		});
		// 10,000 used of 1,000.
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		if (policy.algorithm().isBucket()) {
			this.clock.advance(Duration.ofSeconds(539)); // 8,983 of the 9,001 units that bring one back
			assertThat(take(policy, "k", 1).allowed()).as("still in debt").isFalse();
			this.clock.advance(Duration.ofSeconds(2));
			assertThat(take(policy, "k", 1).allowed()).as("repaid").isTrue();
		}
		else {
			this.clock.advance(Duration.ofSeconds(59));
			assertThat(take(policy, "k", 1).allowed()).as("still in debt").isFalse();
			this.clock.advance(Duration.ofSeconds(1));
			assertThat(take(policy, "k", 1_000).allowed()).as("forgiven with the window").isTrue();
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRequestRejectedByOneOfItsLimitsTakesNothingFromTheOthers(Algorithm algorithm) {
		RateLimitPolicy tested = policy(algorithm, 5, Duration.ofMinutes(1));
		RateLimitPolicy strict = policy(Algorithm.FIXED, 1, Duration.ofMinutes(1));
		assumeSupported(tested);
		this.clock.alignTo(tested.window(), 1_000);
		List<Acquisition> both = List.of(new Acquisition(tested, "k", 1), new Acquisition(strict, "k", 1));
		assertThat(acquireAll(both).allowed()).isTrue();
		for (int i = 0; i < 3; i++) {
			Reservation rejected = acquireAll(both);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.decisions().get(1).allowed()).isFalse();
			// What the tested policy alone would have left: its unit was given back.
			assertThat(rejected.decisions().get(0).remaining()).isEqualTo(4);
		}
		for (int remaining = 3; remaining >= 0; remaining--) {
			assertThat(take(tested, "k", 1).remaining()).isEqualTo(remaining);
		}
		assertThat(take(tested, "k", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aLimitThatRejectsAfterOthersAdmittedLeavesThemUntouched(Algorithm algorithm) {
		RateLimitPolicy first = policy(Algorithm.FIXED, 10, Duration.ofMinutes(1));
		RateLimitPolicy tested = policy(algorithm, 2, Duration.ofMinutes(1));
		assumeSupported(tested);
		this.clock.alignTo(tested.window(), 1_000);
		List<Acquisition> both = List.of(new Acquisition(first, "k", 1), new Acquisition(tested, "k", 1));
		assertThat(acquireAll(both).allowed()).isTrue();
		assertThat(acquireAll(both).allowed()).isTrue();
		for (int i = 0; i < 5; i++) {
			assertThat(acquireAll(both).allowed()).isFalse();
		}
		assertThat(take(first, "k", 8).remaining()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void aRefundGivesTheUnitsBack(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		Acquisition one = new Acquisition(policy, "k", 1);
		Reservation counted = acquireAll(List.of(one));
		assertThat(counted.allowed()).isTrue();
		this.clock.advanceMillis(10);
		assertThat(take(policy, "k", 2).remaining()).isZero();
		refund(one, counted.countedAt(0));
		assertThat(take(policy, "k", 1).allowed()).isTrue();
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		// Given back once, the units are no longer held: a second refund of the same admission gives nothing more
		// than what the window still holds, and never more than the capacity.
		refund(new Acquisition(policy, "other", 1), counted.countedAt(0));
		assertThat(take(policy, "other", 3).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER", "SLIDING_LOG", "CONCURRENCY" })
	void aRefundOfAWindowThatHasPassedCreatesNoCapacity(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, 3, Duration.ofMinutes(1));
		assumeSupported(policy);
		this.clock.alignTo(policy.window(), 1_000);
		Acquisition one = new Acquisition(policy, "k", 1);
		Reservation counted = acquireAll(List.of(one));
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(take(policy, "k", 3).allowed()).isTrue();
		refund(one, counted.countedAt(0));
		assertThat(take(policy, "k", 1).allowed()).isFalse();
	}

	@Test
	void aConcurrencyLimitHoldsEachSlotUntilItIsGivenBackHoweverLongItRuns() {
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		assumeSupported(policy);
		Acquisition slot = new Acquisition(policy, "k", 1);
		Reservation first = acquireAll(List.of(slot));
		this.clock.advance(Duration.ofSeconds(20));
		Reservation second = acquireAll(List.of(slot));
		assertThat(first.allowed()).isTrue();
		assertThat(second.allowed()).isTrue();
		assertThat(second.decisions().get(0).remaining()).isZero();
		this.clock.advance(Duration.ofSeconds(30)); // 50s: both still run
		Decision full = take(policy, "k", 1);
		assertThat(full.allowed()).isFalse();
		assertThat(full.remaining()).isZero();
		refund(slot, first.countedAt(0));
		Reservation third = acquireAll(List.of(slot));
		assertThat(third.allowed()).isTrue();
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		refund(slot, second.countedAt(0));
		refund(slot, third.countedAt(0));
		assertThat(take(policy, "k", 2).allowed()).isTrue();
	}

	@Test
	void aSlotItsHolderNeverGaveBackIsFreeOnceItsHoldEndsAndItsLateReleaseFreesNoOther() {
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		assumeSupported(policy);
		Acquisition slot = new Acquisition(policy, "k", 1);
		Reservation dead = acquireAll(List.of(slot, new Acquisition(policy, "k2", 1)));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(take(policy, "k", 1).allowed()).isTrue();
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(58));
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(1)); // the first slot's hold ended; the second's 1s later
		assertThat(take(policy, "k", 1).allowed()).isTrue();
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		refund(slot, dead.countedAt(0)); // a holder that comes back after its hold: its slot was taken since
		assertThat(take(policy, "k", 1).allowed()).isFalse();
	}

	@Test
	void slotsTakenInOneMillisecondAreGivenBackOneAtATime() {
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 3, Duration.ofMinutes(1));
		assumeSupported(policy);
		Acquisition slot = new Acquisition(policy, "k", 1);
		long[] countedAt = new long[3];
		for (int i = 0; i < 3; i++) {
			Reservation taken = acquireAll(List.of(slot));
			assertThat(taken.allowed()).isTrue();
			countedAt[i] = taken.countedAt(0);
		}
		assertThat(take(policy, "k", 1).allowed()).isFalse();
		for (int i = 0; i < 3; i++) {
			refund(slot, countedAt[i]);
			assertThat(take(policy, "k", 1).allowed()).isTrue();
			assertThat(take(policy, "k", 1).allowed()).isFalse();
		}
	}

	@Test
	void slotsAllGivenBackLeaveNothingHeldWhateverTheirNumber() {
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 3, Duration.ofMinutes(1));
		assumeSupported(policy);
		Acquisition slot = new Acquisition(policy, "k", 1);
		Reservation kept = acquireAll(List.of(slot));
		for (int i = 0; i < 200; i++) {
			this.clock.advanceMillis(5);
			Reservation taken = acquireAll(List.of(slot));
			assertThat(taken.allowed()).isTrue();
			refund(slot, taken.countedAt(0));
		}
		Decision one = this.store.peek(policy, "k");
		assertThat(one.remaining()).isEqualTo(2);
		assertThat(one.resetAfterMillis()).as("the one slot held, taken a second ago")
			.isEqualTo(Duration.ofMinutes(1).minusSeconds(1).toMillis());
		refund(slot, kept.countedAt(0));
		Decision none = this.store.peek(policy, "k");
		assertThat(none.remaining()).isEqualTo(3);
		assertThat(none.resetAfterMillis()).as("nothing held").isZero();
	}

	@Test
	void concurrentHoldersNeverHoldMoreThanTheLimit() {
		RateLimitPolicy policy = policy(Algorithm.CONCURRENCY, 3, Duration.ofMinutes(1));
		assumeSupported(policy);
		Acquisition slot = new Acquisition(policy, "k", 1);
		AtomicInteger inFlight = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger admitted = new AtomicInteger();
		ConcurrentTestHarness.run(6, () -> {
			for (int i = 0; i < 15; i++) {
				Reservation taken = acquireAll(List.of(slot));
				if (taken.allowed()) {
					most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
					admitted.incrementAndGet();
					Thread.yield();
					inFlight.decrementAndGet();
					refund(slot, taken.countedAt(0));
				}
				this.clock.advanceMillis(1);
			}
		});
		assertThat(most.get()).isBetween(1, 3);
		assertThat(admitted.get()).isPositive();
		assertThat(take(policy, "k", 3).allowed()).as("every slot given back").isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER" })
	void aCalendarMonthStartsAtTheZonesMidnightAndIsCountedDownToIt(Algorithm algorithm) {
		RateLimitPolicy policy = calendarPolicy(algorithm, 3, CalendarWindow.Period.MONTH);
		assumeSupported(policy);
		this.clock.set(Instant.parse("2030-01-31T22:59:59Z").toEpochMilli()); // 23:59:59 in Berlin
		assertThat(take(policy, "k", 3).allowed()).isTrue();
		Decision rejected = take(policy, "k", 1);
		assertThat(rejected.allowed()).isFalse();
		if (algorithm == Algorithm.FIXED) {
			assertThat(rejected.retryAfterMillis()).isEqualTo(1_000);
			assertThat(rejected.resetAfterMillis()).isEqualTo(1_000);
		}
		else {
			// The whole of January still weighs at February's start; it has faded by February's end (28 days).
			assertThat(rejected.resetAfterMillis()).isEqualTo(1_000 + Duration.ofDays(28).toMillis());
		}
		this.clock.set(Instant.parse("2030-01-31T23:00:00Z").toEpochMilli()); // February in Berlin
		assertThat(take(policy, "k", 1).allowed()).isEqualTo(algorithm == Algorithm.FIXED);
		this.clock.set(Instant.parse("2030-02-14T23:00:00Z").toEpochMilli()); // half of February gone
		// The fixed window: 3 - 2 used in February. The counter: ⌊3 - 3 × ½⌋ - 1, January weighing half.
		assertThat(take(policy, "k", 1).remaining()).isEqualTo((algorithm == Algorithm.FIXED) ? 1 : 0);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER" })
	void aCalendarDayIsAsLongAsTheZoneMakesItWhenClocksChange(Algorithm algorithm) {
		RateLimitPolicy policy = calendarPolicy(algorithm, 1, CalendarWindow.Period.DAY);
		assumeSupported(policy);
		// 2030-03-31 in Berlin: clocks go forward at 02:00, the day has 23 hours.
		this.clock.set(Instant.parse("2030-03-30T23:00:00Z").toEpochMilli());
		assertThat(take(policy, "spring", 1).allowed()).isTrue();
		Decision spring = take(policy, "spring", 1);
		// 2030-10-27: clocks go back at 03:00, the day has 25 hours.
		this.clock.set(Instant.parse("2030-10-26T22:00:00Z").toEpochMilli());
		assertThat(take(policy, "autumn", 1).allowed()).isTrue();
		Decision autumn = take(policy, "autumn", 1);
		if (algorithm == Algorithm.FIXED) {
			assertThat(spring.retryAfterMillis()).isEqualTo(Duration.ofHours(23).toMillis());
			assertThat(autumn.retryAfterMillis()).isEqualTo(Duration.ofHours(25).toMillis());
		}
		else {
			// Until the end of the next day, whose whole length the unit still weighs in.
			assertThat(spring.resetAfterMillis()).isEqualTo(Duration.ofHours(23 + 24).toMillis());
			assertThat(autumn.resetAfterMillis()).isEqualTo(Duration.ofHours(25 + 24).toMillis());
		}
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED", "SLIDING_COUNTER" })
	void aCalendarQuotaDecidedWithAnotherLimitIsAllOrNothingAndARefundGoesBackToItsMonth(Algorithm algorithm) {
		RateLimitPolicy monthly = calendarPolicy(algorithm, 2, CalendarWindow.Period.MONTH);
		RateLimitPolicy perMinute = policy(Algorithm.FIXED, 10, Duration.ofMinutes(1));
		assumeSupported(monthly);
		this.clock.set(Instant.parse("2030-05-20T10:00:00Z").toEpochMilli());
		List<Acquisition> both = List.of(new Acquisition(monthly, "k", 1), new Acquisition(perMinute, "k", 1));
		Reservation first = acquireAll(both);
		assertThat(first.allowed()).isTrue();
		assertThat(acquireAll(both).allowed()).isTrue();
		Reservation third = acquireAll(both);
		assertThat(third.allowed()).isFalse();
		assertThat(third.decisions().get(0).retryAfterMillis()).isPositive();
		// Counted at the time it was taken, on this machine's calendar: the refund finds its month.
		assertThat(first.countedAt(0)).isBetween(this.clock.currentTimeMillis() - 1, this.clock.currentTimeMillis());
		refund(both.get(0), first.countedAt(0));
		assertThat(take(monthly, "k", 1).allowed()).isTrue();
		assertThat(take(monthly, "k", 1).allowed()).isFalse();
		assertThat(take(perMinute, "k", 1).remaining()).isEqualTo(7);
	}

	private static RateLimitPolicy calendarPolicy(Algorithm algorithm, long limit, CalendarWindow.Period period) {
		return RateLimitPolicy.builder(nextName(algorithm))
			.algorithm(algorithm)
			.limit(limit)
			.window(CalendarWindow.of(period, ZoneId.of("Europe/Berlin")))
			.build();
	}

	protected final Reservation acquireAll(List<Acquisition> acquisitions) {
		return nonBlocking() ? join(this.store.tryAcquireAllAsync(acquisitions)) : this.store.tryAcquireAll(acquisitions);
	}

	protected final void refund(Acquisition acquisition, long countedAtMillis) {
		if (nonBlocking()) {
			join(this.store.refundAllAsync(List.of(acquisition), new long[] { countedAtMillis }));
		}
		else {
			this.store.refund(acquisition, countedAtMillis);
		}
	}

	/** Wait for a stage, failing with what failed it, as the blocking method would have thrown. */
	private static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException | TimeoutException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void assumeSupported(RateLimitPolicy policy) {
		try {
			this.store.checkSupported(policy);
		}
		catch (IllegalArgumentException ex) {
			Assumptions.abort("not supported by this store: " + ex.getMessage());
		}
	}

	private void takeUntilRejected(RateLimitPolicy policy, String key) {
		for (int i = 0; i < 1000; i++) {
			if (!take(policy, key, 1).allowed()) {
				return;
			}
		}
		throw new AssertionError("never rejected");
	}

	protected static RateLimitPolicy policy(Algorithm algorithm, long limit, Duration window) {
		return RateLimitPolicy.builder(nextName(algorithm)).algorithm(algorithm).limit(limit).window(window).build();
	}

	private static String nextName(Algorithm algorithm) {
		return "conformance-" + algorithm.name().toLowerCase() + "-" + policies.incrementAndGet();
	}

	/** A store that counts the decisions asked of it, as another instance's view of the shared one. */
	private static final class CountedStore implements RateLimitStore {

		private final RateLimitStore store;

		private final AtomicLong calls;

		CountedStore(RateLimitStore store, AtomicLong calls) {
			this.store = store;
			this.calls = calls;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			this.calls.incrementAndGet();
			return this.store.tryAcquire(policy, key, cost);
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			this.calls.incrementAndGet();
			return this.store.tryAcquireAll(acquisitions);
		}

		@Override
		public CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
			this.calls.incrementAndGet();
			return this.store.tryAcquireAllAsync(acquisitions);
		}

		@Override
		public void refund(Acquisition acquisition, long countedAtMillis) {
			this.store.refund(acquisition, countedAtMillis);
		}

		@Override
		public void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
			this.store.refundAll(acquisitions, countedAtMillis);
		}

		@Override
		public CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
			return this.store.refundAllAsync(acquisitions, countedAtMillis);
		}

		@Override
		public long currentTimeMillis() {
			return this.store.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.store.reset(policy, key);
		}

		@Override
		public boolean isLocal() {
			return this.store.isLocal();
		}

		@Override
		public void addResetListener(ResetListener listener) {
			this.store.addResetListener(listener);
		}

	}

}
