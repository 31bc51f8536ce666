package io.github.ratelimit.limiter;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.conformance.SharedInMemoryStore;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a store of one part (a standalone Redis), a breaker per algorithm, so one failing script does not send every
 * policy to its failure mode; and leased blocks that live by the monotonic clock, so a wall clock stepped back does not
 * stretch one past its window.
 */
class OnePartStoreBreakersAndLeaseClockTests {

	private final MutableTimeSource storeClock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	@Test
	void oneAlgorithmsFailingScriptOpensOnlyItsOwnBreaker() {
		SharedInMemory store = new SharedInMemory(InMemoryRateLimitStore.builder().clock(this.storeClock).build(),
				Set.of(Algorithm.FIXED));
		RateLimiter limiter = RateLimiter.builder(store).clock(this.storeClock).failureThreshold(3).denyCache(false)
			.build();
		RateLimitPolicy fixed = policy(Algorithm.FIXED, 10);
		RateLimitPolicy bucket = policy(Algorithm.TOKEN_BUCKET, 10);
		for (int i = 0; i < 3; i++) {
			assertThat(limiter.tryAcquire(fixed, "k").origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		}
		assertThat(limiter.isCircuitOpen(fixed, "k")).isTrue();
		assertThat(limiter.isCircuitOpen(bucket, "k")).isFalse();
		Decision decision = limiter.tryAcquire(bucket, "k");
		assertThat(decision.origin()).as("the bucket's script still decides").isEqualTo(Decision.Origin.STORE);
		assertThat(decision.allowed()).isTrue();
	}

	/**
	 * A block taken 10 s into a minute lives until the minute ends, 50 s later by the monotonic clock, however far the
	 * wall clock is stepped back meanwhile: the next minute admits its limit, not the old block's units on top.
	 */
	@Test
	void aWallClockSteppedBackDoesNotStretchALeasedBlockPastItsWindow() {
		SharedInMemory store = new SharedInMemory(InMemoryRateLimitStore.builder().clock(this.storeClock).build(),
				Set.of());
		AtomicLong steppedBack = new AtomicLong();
		TimeSource instanceClock = new TimeSource() {

			@Override
			public long currentTimeMillis() {
				return OnePartStoreBreakersAndLeaseClockTests.this.storeClock.currentTimeMillis() - steppedBack.get();
			}

			@Override
			public long monotonicMillis() {
				return OnePartStoreBreakersAndLeaseClockTests.this.storeClock.currentTimeMillis();
			}

		};
		RateLimitPolicy policy = policy(Algorithm.FIXED, 100).toBuilder().lease(10).build();
		RateLimiter limiter = RateLimiter.builder(store).clock(instanceClock).build();
		this.storeClock.alignTo(policy.window(), 10_000);
		assertThat(limiter.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE); // a block of 10
		assertThat(limiter.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.LEASE); // 8 left in it
		this.storeClock.advance(Duration.ofSeconds(55)); // the next minute, 5 s in
		steppedBack.set(30_000); // the wall clock reads 25 s into the old minute
		long admitted = 0;
		for (int i = 0; i < 200; i++) {
			admitted += limiter.tryAcquire(policy, "k").allowed() ? 1 : 0;
		}
		assertThat(admitted).as("the new minute's limit, none of the old block's units").isEqualTo(100);
	}

	/**
	 * A denial this instance learnt from the store while its block was empty does not shadow a unit given back to the
	 * block since, however far the wall clock was stepped back: the block's life is read on the monotonic clock.
	 */
	@Test
	void aDenialLearntWhileTheBlockWasEmptyDoesNotShadowAUnitGivenBackToItWhateverTheWallClockSays() {
		SharedInMemory store = new SharedInMemory(InMemoryRateLimitStore.builder().clock(this.storeClock).build(),
				Set.of());
		RateLimitPolicy policy = policy(Algorithm.FIXED, 20).toBuilder().lease(10).build();
		this.storeClock.alignTo(policy.window(), 10_000);
		RateLimiter holder = RateLimiter.builder(store).clock(steppedBack(30_000)).build();
		RateLimiter other = RateLimiter.builder(store).clock(this.storeClock).build();
		Admission first = holder.tryAcquireAll(List.of(new Acquisition(policy, "k", 1))); // a block of 10
		assertThat(first.allowed()).isTrue();
		for (int i = 0; i < 9; i++) {
			assertThat(holder.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.LEASE);
		}
		long othersAdmitted = 0;
		for (int i = 0; i < 20; i++) {
			othersAdmitted += other.tryAcquire(policy, "k").allowed() ? 1 : 0;
		}
		assertThat(othersAdmitted).isEqualTo(10);
		assertThat(holder.tryAcquire(policy, "k").allowed()).as("the block and the store empty").isFalse();
		assertThat(holder.tryAcquire(policy, "k").origin()).as("the denial cached").isEqualTo(Decision.Origin.DENY_CACHE);
		first.refund(0); // back to the block it came from
		Decision fromBlock = holder.tryAcquire(policy, "k");
		assertThat(fromBlock.allowed()).isTrue();
		assertThat(fromBlock.origin()).isEqualTo(Decision.Origin.LEASE);
	}

	/**
	 * A request whose other limit's store call fails, under {@code deny}, is rejected, and the unit its leased limit
	 * took from the block goes back: the leased limit still admits its whole capacity in the window.
	 */
	@Test
	void aStoreFailureOfAnotherLimitGivesTheLeasedUnitBackAndFollowsThatLimitsFailureMode() {
		SharedInMemory store = new SharedInMemory(InMemoryRateLimitStore.builder().clock(this.storeClock).build(),
				Set.of(Algorithm.SLIDING_COUNTER));
		RateLimitPolicy leased = policy(Algorithm.FIXED, 100).toBuilder().lease(10).build();
		RateLimitPolicy failing = policy(Algorithm.SLIDING_COUNTER, 100).toBuilder().failureMode(FailureMode.DENY)
			.build();
		this.storeClock.alignTo(leased.window(), 10_000);
		RateLimiter limiter = RateLimiter.builder(store).clock(this.storeClock).denyCache(false).build();
		for (int i = 0; i < 3; i++) {
			Admission admission = limiter.tryAcquireAll(List.of(new Acquisition(leased, "k", 1),
					new Acquisition(failing, "k", 1)));
			assertThat(admission.allowed()).isFalse();
			assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		}
		long admitted = 0;
		for (int i = 0; i < 200; i++) {
			admitted += limiter.tryAcquire(leased, "k").allowed() ? 1 : 0;
		}
		assertThat(admitted).as("every unit the failed requests took came back").isEqualTo(100);
	}

	/** A clock whose wall time reads {@code millis} behind the store's, and whose monotonic time does not. */
	private TimeSource steppedBack(long millis) {
		MutableTimeSource storeClock = this.storeClock;
		return new TimeSource() {

			@Override
			public long currentTimeMillis() {
				return storeClock.currentTimeMillis() - millis;
			}

			@Override
			public long monotonicMillis() {
				return storeClock.currentTimeMillis();
			}

		};
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long limit) {
		return RateLimitPolicy.builder(algorithm.name().toLowerCase())
			.algorithm(algorithm)
			.limit(limit)
			.window(Duration.ofMinutes(1))
			.failureMode(FailureMode.ALLOW)
			.build();
	}

	/** An in-memory store that says it is shared, so that blocks are leased; its failing algorithms' calls fail. */
	private static final class SharedInMemory extends SharedInMemoryStore {

		private final Set<Algorithm> failing;

		SharedInMemory(RateLimitStore delegate, Set<Algorithm> failing) {
			super(delegate);
			this.failing = failing;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			failIfFailing(policy);
			return super.tryAcquire(policy, key, cost);
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			acquisitions.forEach((acquisition) -> failIfFailing(acquisition.policy()));
			return super.tryAcquireAll(acquisitions);
		}

		private void failIfFailing(RateLimitPolicy policy) {
			if (this.failing.contains(policy.algorithm())) {
				throw new RateLimitStoreException("the " + policy.algorithm() + " script fails");
			}
		}

	}

}
