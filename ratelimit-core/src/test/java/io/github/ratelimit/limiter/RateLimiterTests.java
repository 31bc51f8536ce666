package io.github.ratelimit.limiter;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.Decision;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.StoreKeys;
import io.github.ratelimit.store.RateLimitStoreException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

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
		assertThat(this.store.lastKey).startsWith(StoreKeys.HASHED_PREFIX).hasSizeLessThan(60);
		this.limiter.tryAcquire(policy, "short");
		assertThat(this.store.lastKey).isEqualTo("short");
		this.limiter.tryAcquire(policy, StoreKeys.HASHED_PREFIX + "forged");
		assertThat(this.store.lastKey).isNotEqualTo(StoreKeys.HASHED_PREFIX + "forged");
	}

	@Test
	void aCostBelowOneIsAnError() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.limiter.tryAcquire(policy(FailureMode.ALLOW), "k", 0))
			.withMessage("'cost' must be at least 1 but was 0");
	}

	@Test
	void aResetKeyIsAdmittedAgainAndNoLongerDenyCached() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).build(); // deny cache on: not local
		for (int i = 0; i < 3; i++) {
			remote.tryAcquire(policy, "k");
		}
		assertThat(remote.tryAcquire(policy, "k").allowed()).isFalse();
		assertThat(remote.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.DENY_CACHE);
		remote.tryAcquire(policy, "other");
		remote.reset(policy, "k");
		assertThat(this.store.resets).containsExactly("k");
		Decision afterReset = remote.tryAcquire(policy, "k");
		assertThat(afterReset.allowed()).isTrue();
		assertThat(afterReset.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(afterReset.remaining()).isEqualTo(2);
		assertThat(remote.tryAcquire(policy, "other").remaining()).as("other keys keep their counts").isEqualTo(1);
	}

	@Test
	void clearingForgetsTheStoresCountersTheFallbacksAndTheDenyCache() {
		RateLimitPolicy policy = policy(FailureMode.LOCAL);
		// Deny cache on (the store is not local); a circuit that stays closed, so that every decision asks the store.
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).failureThreshold(100).build();
		for (int i = 0; i < 3; i++) {
			remote.tryAcquire(policy, "k");
		}
		assertThat(remote.tryAcquire(policy, "k").allowed()).isFalse();
		assertThat(remote.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.DENY_CACHE);
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			remote.tryAcquire(policy, "fallen-back");
		}
		assertThat(remote.tryAcquire(policy, "fallen-back").allowed()).isFalse();
		this.store.failing = false;
		remote.clear();
		Decision stored = remote.tryAcquire(policy, "k");
		assertThat(stored.origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(stored.remaining()).isEqualTo(2);
		this.store.failing = true;
		Decision fallback = remote.tryAcquire(policy, "fallen-back");
		assertThat(fallback.origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(fallback.allowed()).isTrue();
		assertThat(fallback.remaining()).isEqualTo(2);
	}

	@Test
	void aRejectionDecidedBeforeAResetIsNotRememberedAfterIt() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		ResetMidDecisionStore store = new ResetMidDecisionStore();
		RateLimiter remote = RateLimiter.builder(store).clock(this.clock).build(); // deny cache on: not local
		store.limiter = remote;
		assertThat(remote.tryAcquire(policy, "k").allowed()).isFalse();
		Decision after = remote.tryAcquire(policy, "k");
		assertThat(after.origin()).as("not rejected from the deny cache").isEqualTo(Decision.Origin.STORE);
		assertThat(after.allowed()).isTrue();
	}

	/**
	 * Rejects its first decision, and an operator's reset of the key lands while that rejection is on its way back;
	 * admits afterwards, as a store whose state was reset does.
	 */
	static final class ResetMidDecisionStore implements RateLimitStore {

		RateLimiter limiter;

		private boolean first = true;

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			if (this.first) {
				this.first = false;
				this.limiter.reset(policy, key);
				return Decision.rejected(policy.capacity(), 0, 60_000, 60_000);
			}
			return Decision.allowed(policy.capacity(), policy.capacity() - cost, 0);
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
		}

	}

	@Test
	void aResetOfALongKeyResetsItsHashedForm() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		String longKey = "k".repeat(5_000);
		this.limiter.tryAcquire(policy, longKey);
		this.limiter.reset(policy, longKey);
		assertThat(this.store.resets).containsExactly(this.store.lastKey);
	}

	@Test
	void clearingTheDenyCacheSendsRejectedKeysToTheStoreAgain() {
		RateLimitPolicy policy = policy(FailureMode.ALLOW);
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).build();
		for (int i = 0; i < 4; i++) {
			remote.tryAcquire(policy, "k");
		}
		int calls = this.store.calls;
		assertThat(remote.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.DENY_CACHE);
		assertThat(this.store.calls).isEqualTo(calls);
		remote.clearDenyCache();
		assertThat(remote.tryAcquire(policy, "k").origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(this.store.calls).isEqualTo(calls + 1);
	}

	@Test
	void aResetAlsoForgetsTheKeyInTheLocalFallback() {
		RateLimitPolicy policy = policy(FailureMode.LOCAL);
		RateLimiter limiter = RateLimiter.builder(this.store).clock(this.clock).denyCache(false).build();
		this.store.failing = true;
		for (int i = 0; i < 3; i++) {
			limiter.tryAcquire(policy, "k");
		}
		assertThat(limiter.tryAcquire(policy, "k").allowed()).isFalse();
		this.store.failing = false;
		limiter.reset(policy, "k");
		this.store.failing = true;
		assertThat(limiter.tryAcquire(policy, "k").allowed()).isTrue();
	}

	@Test
	void aChargeTheStoreFailsOnceIsTriedAgainAndTaken() {
		RateLimitPolicy policy = RateLimitPolicy.builder("metered").algorithm(Algorithm.TOKEN_BUCKET).limit(10)
			.window(Duration.ofMinutes(1)).build();
		Admission admission = this.limiter.tryAcquireAll(List.of(new Acquisition(policy, "k", 2)));
		this.store.failingCharges = 1;
		admission.settle(0, 8);
		assertThat(this.limiter.tryAcquire(policy, "k", 3).allowed()).as("2 left").isFalse();
		assertThat(this.limiter.tryAcquire(policy, "k", 2).allowed()).isTrue();
		assertThat(this.listener.chargesLost).isEmpty();
	}

	@Test
	void aChargeTheStoreFailsTwiceIsToldToTheListenerWithItsPolicyAndUnits() {
		RateLimitPolicy policy = RateLimitPolicy.builder("metered").algorithm(Algorithm.TOKEN_BUCKET).limit(10)
			.window(Duration.ofMinutes(1)).build();
		Admission admission = this.limiter.tryAcquireAll(List.of(new Acquisition(policy, "k", 2)));
		this.store.failingCharges = 2;
		admission.settle(0, 8);
		assertThat(this.listener.chargesLost).containsExactly("metered:6");
		assertThat(this.limiter.tryAcquire(policy, "k", 8).allowed()).as("only the reservation counted").isTrue();
	}

	private static RateLimitPolicy policy(FailureMode failureMode) {
		return RateLimitPolicy.builder("p").limit(3).window(Duration.ofMinutes(1)).failureMode(failureMode).build();
	}

	/**
	 * A store that can be made to fail, as an unreachable Redis would.
	 */
	@Test
	void severalLimitsPassOrFailTogetherAndAnyCachedDenialRejectsWithoutCallingTheStore() {
		RateLimitPolicy wide = RateLimitPolicy.builder("wide").limit(3).window(Duration.ofMinutes(1)).build();
		RateLimitPolicy narrow = RateLimitPolicy.builder("narrow").limit(1).window(Duration.ofMinutes(1)).build();
		RateLimiter remote = RateLimiter.builder(this.store).clock(this.clock).denyCache(true).build();
		this.clock.alignTo(Duration.ofMinutes(1), 1_000);
		List<Acquisition> both = List.of(new Acquisition(wide, "k", 1), new Acquisition(narrow, "k", 1));
		assertThat(acquireAll(remote, both).allowed()).isTrue();
		Admission rejected = acquireAll(remote, both);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.decision(1).origin()).isEqualTo(Decision.Origin.STORE);
		assertThat(rejected.decision(0).remaining()).as("given back").isEqualTo(2);
		int calls = this.store.calls;
		Admission cached = acquireAll(remote, both);
		assertThat(cached.allowed()).isFalse();
		assertThat(cached.decision(1).origin()).isEqualTo(Decision.Origin.DENY_CACHE);
		assertThat(cached.decision(0)).as("not asked").isNull();
		assertThat(this.store.calls).isEqualTo(calls);
		assertThat(remote.tryAcquire(wide, "k").remaining()).isEqualTo(1);
	}

	@Test
	void whenTheStoreFailsEachPolicysFailureModeDecidesForItAndTheFallbackGivesBackOnARejection() {
		RateLimitPolicy open = RateLimitPolicy.builder("open").limit(1).window(Duration.ofMinutes(1)).build();
		RateLimitPolicy local = RateLimitPolicy.builder("local").limit(1).window(Duration.ofMinutes(1))
			.failureMode(FailureMode.LOCAL).build();
		RateLimitPolicy closed = RateLimitPolicy.builder("closed").limit(1).window(Duration.ofMinutes(1))
			.failureMode(FailureMode.DENY).build();
		this.clock.alignTo(Duration.ofMinutes(1), 1_000);
		this.store.failing = true;
		Admission all = acquireAll(this.limiter, List.of(new Acquisition(open, "k", 1),
				new Acquisition(local, "k", 1), new Acquisition(closed, "k", 1)));
		assertThat(all.allowed()).isFalse();
		assertThat(all.decision(0).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
		assertThat(all.decision(1).origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
		assertThat(all.decision(2).origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		List<Acquisition> openAndLocal = List.of(new Acquisition(open, "k", 1), new Acquisition(local, "k", 1));
		assertThat(acquireAll(this.limiter, openAndLocal).allowed()).as("the fallback gave its unit back").isTrue();
		assertThat(acquireAll(this.limiter, openAndLocal).allowed()).isFalse();
	}

	@Test
	void anAdmittedRequestsUnitsCanBeGivenBackOnceEach() {
		RateLimitPolicy policy = RateLimitPolicy.builder("refunded").limit(2).window(Duration.ofMinutes(1)).build();
		this.clock.alignTo(Duration.ofMinutes(1), 1_000);
		Admission first = acquireAll(this.limiter, List.of(new Acquisition(policy, "k", 1)));
		assertThat(this.limiter.tryAcquire(policy, "k").remaining()).isZero();
		refund(first, 0);
		refund(first, 0);
		assertThat(this.limiter.tryAcquire(policy, "k").allowed()).isTrue();
		assertThat(this.limiter.tryAcquire(policy, "k").allowed()).isFalse();
	}

	@Test
	void aRequestThatCanNeverFitIsRejectedWithoutAskingTheStore() {
		SwitchableStore store = new SwitchableStore(InMemoryRateLimitStore.builder().clock(this.clock).build());
		RateLimiter limiter = RateLimiter.builder(store).clock(this.clock).denyCache(true).build();
		RateLimitPolicy policy = RateLimitPolicy.builder("p").limit(5).window(Duration.ofMinutes(1)).build();
		for (int i = 0; i < 100; i++) {
			Decision decision = limiter.tryAcquire(policy, "k", 6);
			assertThat(decision.exceedsCapacity()).isTrue();
			assertThat(acquireAll(limiter, List.of(new Acquisition(policy, "k", 1), new Acquisition(policy, "j", 6)))
				.allowed()).isFalse();
		}
		assertThat(store.calls).isZero();
		assertThat(limiter.tryAcquire(policy, "k", 5).allowed()).as("nothing was taken").isTrue();
	}

	@Test
	void aFailingPartOfAPartitionedStoreSendsOnlyItsOwnPoliciesToTheirFailureModes() {
		// The security review's case: a per-address limit drawn with a shared quota whose item is throttled.
		PartitionedStore store = new PartitionedStore(InMemoryRateLimitStore.builder().clock(this.clock).build());
		RateLimiter limiter = RateLimiter.builder(store).clock(this.clock).denyCache(false).failureThreshold(100).build();
		RateLimitPolicy perAddress = RateLimitPolicy.builder("edge").limit(5).window(Duration.ofHours(1)).build();
		RateLimitPolicy shared = RateLimitPolicy.builder("account").limit(1_000).window(Duration.ofHours(1))
			.failureMode(FailureMode.ALLOW).build();
		store.failingKey = "application";
		int admitted = 0;
		for (int i = 0; i < 50; i++) {
			Admission admission = acquireAll(limiter, List.of(new Acquisition(perAddress, "203.0.113.7", 1),
					new Acquisition(shared, "application", 1)));
			if (admission.allowed()) {
				admitted++;
				assertThat(admission.decision(0).origin()).isEqualTo(Decision.Origin.STORE);
				assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_OPEN);
			}
		}
		assertThat(admitted).isEqualTo(5);
	}

	@Test
	void aSharedQuotaThatFailsClosedRejectsAndGivesBackWhatTheHealthyPartsTook() {
		PartitionedStore store = new PartitionedStore(InMemoryRateLimitStore.builder().clock(this.clock).build());
		RateLimiter limiter = RateLimiter.builder(store).clock(this.clock).denyCache(false).failureThreshold(100).build();
		RateLimitPolicy perAddress = RateLimitPolicy.builder("edge").limit(5).window(Duration.ofHours(1)).build();
		RateLimitPolicy shared = RateLimitPolicy.builder("account").limit(1_000).window(Duration.ofHours(1))
			.failureMode(FailureMode.DENY).build();
		store.failingKey = "application";
		for (int i = 0; i < 10; i++) {
			Admission admission = acquireAll(limiter, List.of(new Acquisition(perAddress, "203.0.113.7", 1),
					new Acquisition(shared, "application", 1)));
			assertThat(admission.allowed()).isFalse();
			assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.FAIL_CLOSED);
		}
		store.failingKey = null;
		assertThat(limiter.tryAcquire(perAddress, "203.0.113.7").remaining()).as("nothing stayed taken").isEqualTo(4);
	}

	@Test
	void aSharedQuotaThatFallsBackIsDecidedLocallyWhileTheHealthyPartsDecideInTheStore() {
		PartitionedStore store = new PartitionedStore(InMemoryRateLimitStore.builder().clock(this.clock).build());
		RateLimiter limiter = RateLimiter.builder(store).clock(this.clock).denyCache(false).failureThreshold(100).build();
		RateLimitPolicy perAddress = RateLimitPolicy.builder("edge").limit(5).window(Duration.ofHours(1)).build();
		RateLimitPolicy shared = RateLimitPolicy.builder("account").limit(3).window(Duration.ofHours(1))
			.failureMode(FailureMode.LOCAL).build();
		store.failingKey = "application";
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			Admission admission = acquireAll(limiter, List.of(new Acquisition(perAddress, "203.0.113." + i, 1),
					new Acquisition(shared, "application", 1)));
			if (admission.allowed()) {
				admitted++;
				assertThat(admission.decision(1).origin()).isEqualTo(Decision.Origin.LOCAL_FALLBACK);
			}
		}
		assertThat(admitted).as("the shared quota, in this instance's fallback").isEqualTo(3);
		store.failingKey = null;
		assertThat(limiter.tryAcquire(perAddress, "203.0.113.9").remaining()).as("rejected requests took nothing")
			.isEqualTo(4);
	}

	@Test
	void aPartWhoseCircuitIsOpenIsNotAskedWhileTheOthersAre() {
		PartitionedStore store = new PartitionedStore(InMemoryRateLimitStore.builder().clock(this.clock).build());
		RateLimiter limiter = RateLimiter.builder(store).clock(this.clock).denyCache(false).failureThreshold(1)
			.openDuration(Duration.ofMinutes(1)).build();
		RateLimitPolicy perAddress = RateLimitPolicy.builder("edge").limit(5).window(Duration.ofHours(1)).build();
		RateLimitPolicy shared = RateLimitPolicy.builder("account").limit(1_000).window(Duration.ofHours(1))
			.failureMode(FailureMode.ALLOW).build();
		store.failingKey = "application";
		acquireAll(limiter, List.of(new Acquisition(shared, "application", 1)));
		assertThat(limiter.isCircuitOpen(shared, "application")).isTrue();
		assertThat(limiter.isCircuitOpen(perAddress, "203.0.113.7")).isFalse();
		int calls = store.calls;
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			if (acquireAll(limiter, List.of(new Acquisition(perAddress, "203.0.113.7", 1),
					new Acquisition(shared, "application", 1))).allowed()) {
				admitted++;
			}
		}
		assertThat(admitted).isEqualTo(5);
		assertThat(store.calls - calls).as("the open part is never asked").isEqualTo(10);
	}

	@Test
	void theDenyCacheDropsPoliciesWithNoDenialLeft() {
		LocalDenyCache cache = new LocalDenyCache(100_000);
		long now = this.clock.currentTimeMillis();
		for (int tenant = 0; tenant < 500; tenant++) {
			RateLimitPolicy perTenant = RateLimitPolicy.builder("exports").variant("t" + tenant).limit(1)
				.window(Duration.ofSeconds(1)).build();
			cache.remember(perTenant, "k", 1, Decision.rejected(1, 0, 1_000, 1_000), now);
			if (tenant % 2 == 0) {
				cache.evict(perTenant, "k");
			}
			else {
				assertThat(cache.check(perTenant, "k", 1, now + 1_000)).as("over").isNull();
			}
		}
		assertThat(cache.policies()).isZero();
		assertThat(cache.size()).isZero();
	}

	/** Decide a request that several limits apply to; {@link RateLimiterNonBlockingTests} does it without waiting. */
	Admission acquireAll(RateLimiter limiter, List<Acquisition> acquisitions) {
		return limiter.tryAcquireAll(acquisitions);
	}

	void refund(Admission admission, int... indexes) {
		admission.refund(indexes);
	}

	/** A store whose keys live in parts named after them, one of which can fail, as a Cluster's master can. */
	static final class PartitionedStore implements RateLimitStore {

		private final InMemoryRateLimitStore delegate;

		volatile String failingKey;

		int calls;

		PartitionedStore(InMemoryRateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			this.calls++;
			if (key.equals(this.failingKey)) {
				throw new RateLimitStoreException("throttled");
			}
			return this.delegate.tryAcquire(policy, key, cost);
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			return OneByOne.tryAcquireAll(acquisitions, this::currentTimeMillis,
					(acquisition, now) -> tryAcquire(acquisition.policy(), acquisition.key(), acquisition.cost()), this);
		}

		@Override
		public void refund(Acquisition acquisition, long countedAtMillis) {
			this.delegate.refund(acquisition, countedAtMillis);
		}

		@Override
		public long currentTimeMillis() {
			return this.delegate.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.delegate.reset(policy, key);
		}

		@Override
		public boolean isPartitioned() {
			return true;
		}

		@Override
		public String partitionOf(RateLimitPolicy policy, String key) {
			return key;
		}

	}

	static final class SwitchableStore implements RateLimitStore {

		private final RateLimitStore delegate;

		volatile boolean failing;

		int failingCharges;

		int calls;

		String lastKey;

		final List<String> resets = new ArrayList<>();

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
		public void refund(Acquisition acquisition, long countedAtMillis) {
			if (this.failing) {
				throw new RateLimitStoreException("store unreachable");
			}
			this.delegate.refund(acquisition, countedAtMillis);
		}

		@Override
		public void charge(Acquisition acquisition, long countedAtMillis) {
			if (this.failingCharges > 0) {
				this.failingCharges--;
				throw new RateLimitStoreException("store unreachable");
			}
			this.delegate.charge(acquisition, countedAtMillis);
		}

		@Override
		public long currentTimeMillis() {
			return this.delegate.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.resets.add(key);
			if (this.failing) {
				throw new RateLimitStoreException("store unreachable");
			}
			this.delegate.reset(policy, key);
		}

		@Override
		public void clear() {
			this.delegate.clear();
		}

	}

	static final class RecordingListener implements RateLimitListener {

		final List<Decision> decisions = new ArrayList<>();

		int failures;

		final List<String> chargesLost = new ArrayList<>();

		@Override
		public void onChargeLost(RateLimitPolicy policy, long units, Throwable failure) {
			this.chargesLost.add(policy.name() + ":" + units);
		}

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
