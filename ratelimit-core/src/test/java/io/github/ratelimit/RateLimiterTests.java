package io.github.ratelimit;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RateLimiterTests {

	private final MutableTimeSource clock = MutableTimeSource.at("2030-01-01T00:00:00Z");

	private final SwitchableStore store = new SwitchableStore(
			InMemoryRateLimitStore.builder().clock(this.clock).maxKeys(1000).build());

	private final RecordingListener listener = new RecordingListener();

	private final RateLimiter limiter = RateLimiter.builder(this.store)
		.clock(this.clock)
		.listener(this.listener)
		.failureThreshold(3)
		.openDuration(Duration.ofSeconds(2))
		.build();

	@Test
	void failOpenLetsRequestsPassUncountedAndCountsTheFailure() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		this.store.failing = true;
		Decision decision = this.limiter.tryAcquire(policy, "k");
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		assertThat(decision.isKnown()).isFalse();
		assertThat(this.listener.failures).isEqualTo(1);
		assertThat(this.listener.decisions).containsExactly(decision);
	}

	@Test
	void failClosedRejectsUntilTheStoreIsTriedAgain() {
		RateLimitPolicy policy = policy(FailureMode.DENY);
		this.store.failing = true;
		Decision decision = this.limiter.tryAcquire(policy, "k");
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		assertThat(decision.retryAfterSeconds()).isGreaterThanOrEqualTo(1);
	}

	@Test
	void localFallbackLimitsWithThisInstancesMemory() {
		RateLimitPolicy policy = policy(FailureMode.LOCAL);
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			Decision decision = this.limiter.tryAcquire(policy, "k");
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		}
		assertThat(this.limiter.tryAcquire(policy, "k").allowed()).isFalse();
	}

	@Test
	void theCircuitOpensAfterConsecutiveFailuresAndStopsCallingTheStore() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			this.limiter.tryAcquire(policy, "k");
		}
		assertThat(this.limiter.isCircuitOpen()).isTrue();
		int calls = this.store.calls;
		for (int i = 0; i < 100; i++) {
			assertThat(this.limiter.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		}
		assertThat(this.store.calls).as("an outage costs the threshold, not one call per request").isEqualTo(calls);
	}

	@Test
	void oneProbeAfterTheOpenDurationClosesTheCircuitWhenTheStoreIsBack() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			this.limiter.tryAcquire(policy, "k");
		}
		this.clock.advance(Duration.ofSeconds(2));
		int calls = this.store.calls;
		this.limiter.tryAcquire(policy, "k"); // the probe fails: open again
		assertThat(this.store.calls).isEqualTo(calls + 1);
		assertThat(this.limiter.isCircuitOpen()).isTrue();
		this.limiter.tryAcquire(policy, "k");
		assertThat(this.store.calls).as("no second probe before the next delay").isEqualTo(calls + 1);
		this.store.failing = false;
		this.clock.advance(Duration.ofSeconds(2));
		Decision probe = this.limiter.tryAcquire(policy, "k");
		assertThat(probe.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(this.limiter.isCircuitOpen()).isFalse();
		assertThat(this.limiter.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
	}

	@Test
	void theDenyCacheRejectsLocallyUntilTheStoresRetryTimeAndNoLonger() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).denyCache(true).build();
		for (int i = 0; i < 3; i++) {
			remote.tryAcquire(policy, "k");
		}
		Decision rejected = remote.tryAcquire(policy, "k");
		assertThat(rejected.origin()).isEqualTo(Decision.Origin.STORE);
		int calls = this.store.calls;
		this.clock.advanceMillis(rejected.retryAfterMillis() - 1);
		Decision local = remote.tryAcquire(policy, "k");
		assertThat(local.origin()).isEqualTo(Decision.Origin.DENY_CACHE);
		assertThat(local.retryAfterMillis()).isEqualTo(1);
		assertThat(this.store.calls).isEqualTo(calls);
		this.clock.advanceMillis(1);
		Decision again = remote.tryAcquire(policy, "k");
		assertThat(again.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(again.allowed()).isTrue();
	}

	@Test
	void theDenyCacheNeverRejectsACheaperRequestThanTheOneTheStoreRejected() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).denyCache(true).build();
		remote.tryAcquire(policy, "k", 2);
		assertThat(remote.tryAcquire(policy, "k", 2).allowed()).isFalse();
		Decision cheaper = remote.tryAcquire(policy, "k", 1);
		assertThat(cheaper.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(cheaper.allowed()).isTrue();
	}

	@Test
	void theDenyCacheForgetsADenialWhenTheClockRunsBackwards() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).denyCache(true).build();
		for (int i = 0; i < 4; i++) {
			remote.tryAcquire(policy, "k");
		}
		this.clock.advanceMillis(-1);
		assertThat(remote.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
	}

	@Test
	void theDenyCacheIsOffInFrontOfALocalStore() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter local = RateLimiter.of(InMemoryRateLimitStore.builder().clock(this.clock).build());
		for (int i = 0; i < 5; i++) {
			assertThat(local.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
		}
	}

	@Test
	void longKeysAreHashedBeforeReachingTheStore() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		String longKey = "k".repeat(5_000);
		this.limiter.tryAcquire(policy, longKey);
		assertThat(this.store.lastKey).startsWith(Keys.HASHED_PREFIX).hasSizeLessThan(60);
		this.limiter.tryAcquire(policy, "short");
		assertThat(this.store.lastKey).isEqualTo("short");
		this.limiter.tryAcquire(policy, Keys.HASHED_PREFIX + "forged");
		assertThat(this.store.lastKey).isNotEqualTo(Keys.HASHED_PREFIX + "forged");
	}

	@Test
	void aCostBelowOneIsAnError() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.limiter.tryAcquire(policy(FailureMode.ALLOW), "k", 0))
			.withMessage("'cost' must be at least 1 but was 0");
	}

	@Test
	void permitsTakeFromTheSameCountersAsDecisions() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter bare = RateLimiter.of(InMemoryRateLimitStore.builder().clock(this.clock).build());
		assertThat(bare.tryAcquirePermit(policy, "k")).isTrue();
		assertThat(bare.tryAcquire(policy, "k").remaining()).isEqualTo(1);
		assertThat(bare.tryAcquirePermit(policy, "k", 2)).isFalse();
		assertThat(bare.tryAcquirePermit(policy, "k")).isTrue();
		assertThat(bare.tryAcquirePermit(policy, "k")).isFalse();
		assertThat(bare.tryAcquire(policy, "k").remaining()).isZero();
	}

	@Test
	void permitsFollowTheFailureModeAndOpenTheCircuit() {
		RateLimiter noListener = RateLimiter.builder(this.store)
			.clock(this.clock)
			.denyCache(false)
			.failureThreshold(3)
			.build();
		assertThat(noListener.tryAcquirePermit(policy(FailureMode.ALLOW), "k")).isTrue();
		assertThat(this.store.permitCalls).isEqualTo(1);
		this.store.failing = true;
		assertThat(noListener.tryAcquirePermit(policy(FailureMode.DENY), "k")).isFalse();
		assertThat(noListener.tryAcquirePermit(policy(FailureMode.ALLOW), "k")).isTrue();
		assertThat(noListener.tryAcquirePermit(policy(FailureMode.ALLOW), "k")).isTrue();
		assertThat(noListener.isCircuitOpen()).isTrue();
		assertThat(noListener.tryAcquirePermit(policy(FailureMode.ALLOW), "k")).isTrue();
		assertThat(this.store.calls).isEqualTo(4);
	}

	@Test
	void permitsFallBackToThisInstancesMemoryAndCloseTheCircuitWhenTheStoreIsBack() {
		RateLimitPolicy policy = policy(FailureMode.LOCAL);
		RateLimiter noListener = RateLimiter.builder(this.store)
			.clock(this.clock)
			.denyCache(false)
			.failureThreshold(1)
			.openDuration(Duration.ofSeconds(2))
			.build();
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			assertThat(noListener.tryAcquirePermit(policy, "k")).isTrue();
		}
		assertThat(noListener.tryAcquirePermit(policy, "k")).isFalse();
		assertThat(noListener.isCircuitOpen()).isTrue();
		this.store.failing = false;
		this.clock.advanceMillis(2_000);
		assertThat(noListener.tryAcquirePermit(policy, "k")).isTrue(); // the probe, counted by the store
		assertThat(noListener.isCircuitOpen()).isFalse();
		int permitCalls = this.store.permitCalls;
		assertThat(noListener.tryAcquirePermit(policy, "k")).isTrue();
		assertThat(this.store.permitCalls).isEqualTo(permitCalls + 1);
	}

	@Test
	void permitsAreToldToTheListenerAsWholeDecisions() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter listened = RateLimiter.builder(this.store)
			.clock(this.clock)
			.denyCache(false)
			.listener(this.listener)
			.build();
		assertThat(listened.tryAcquirePermit(policy, "k")).isTrue();
		assertThat(this.listener.decisions).singleElement()
			.satisfies((decision) -> assertThat(decision.remaining()).isEqualTo(2));
	}

	@Test
	void permitsBehindARemoteStoreUseTheDenyCache() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).build(); // deny cache on: not local
		for (int i = 0; i < 3; i++) {
			assertThat(remote.tryAcquirePermit(policy, "k")).isTrue();
		}
		assertThat(remote.tryAcquirePermit(policy, "k")).isFalse();
		int calls = this.store.calls;
		assertThat(remote.tryAcquirePermit(policy, "k")).isFalse();
		assertThat(this.store.calls).isEqualTo(calls);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void permitsOnTheInMemoryStoreAllocateNothingForAKnownKey(Algorithm algorithm) {
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
		RateLimitPolicy admitting = RateLimitPolicy.builder("admitting")
			.algorithm(algorithm)
			.limit(1_000_000_000)
			.window(Duration.ofMinutes(1))
			.build();
		RateLimitPolicy rejecting = RateLimitPolicy.builder("rejecting")
			.algorithm(algorithm)
			.limit(1)
			.window(Duration.ofMinutes(1))
			.build();
		RateLimiter bare = RateLimiter.of(InMemoryRateLimitStore.builder().clock(this.clock).build());
		assertThat(bare.tryAcquirePermit(admitting, "k")).isTrue();
		assertThat(bare.tryAcquirePermit(rejecting, "k")).isTrue();
		long before = threads.getCurrentThreadAllocatedBytes();
		boolean admitted = true;
		boolean rejected = false;
		for (int i = 0; i < 100_000; i++) {
			admitted &= bare.tryAcquirePermit(admitting, "k");
			rejected |= bare.tryAcquirePermit(rejecting, "k");
		}
		long allocated = threads.getCurrentThreadAllocatedBytes() - before;
		assertThat(admitted).isTrue();
		assertThat(rejected).isFalse();
		// Interpreted or compiled, the path has no allocation; one per call would be megabytes.
		assertThat(allocated).isLessThan(1_000);
	}

	@Test
	void aPermitCostBelowOneIsAnError() {
		RateLimiter bare = RateLimiter.of(InMemoryRateLimitStore.builder().clock(this.clock).build());
		assertThatIllegalArgumentException().isThrownBy(() -> bare.tryAcquirePermit(policy(FailureMode.ALLOW), "k", 0))
			.withMessage("'cost' must be at least 1 but was 0");
	}

	private static RateLimitPolicy policy(FailureMode failureMode) {
		return RateLimitPolicy.builder("p").limit(3).window(Duration.ofMinutes(1)).failureMode(failureMode).build();
	}

	/**
	 * A store that can be made to fail, as an unreachable Redis would.
	 */
	static final class SwitchableStore implements RateLimitStore {

		private final RateLimitStore delegate;

		volatile boolean failing;

		int calls;

		int permitCalls;

		String lastKey;

		SwitchableStore(RateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			this.calls++;
			this.lastKey = key;
			if (this.failing) {
				throw new RateLimitStoreException("store unreachable");
			}
			return this.delegate.tryAcquire(policy, key, cost);
		}

		@Override
		public boolean tryAcquirePermit(RateLimitPolicy policy, String key, long cost) {
			this.calls++;
			this.permitCalls++;
			this.lastKey = key;
			if (this.failing) {
				throw new RateLimitStoreException("store unreachable");
			}
			return this.delegate.tryAcquirePermit(policy, key, cost);
		}

	}

	static final class RecordingListener implements RateLimitListener {

		final List<Decision> decisions = new ArrayList<>();

		int failures;

		@Override
		public void onDecision(RateLimitPolicy policy, Decision decision) {
			this.decisions.add(decision);
		}

		@Override
		public void onStoreFailure(RateLimitPolicy policy, RuntimeException failure) {
			this.failures++;
		}

	}

}
