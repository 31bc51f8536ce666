package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.web.AppliedRateLimit;
import org.jspecify.annotations.Nullable;

/**
 * The lock-outs of the penalty groups ({@code penalty}, {@code penalty-group}): reads a layer's checks of its groups,
 * locks out the keys that broke a policy with a penalty, and unlocks them. The lock-outs live in the store (see
 * {@link Penalty}), so they hold on every instance sharing it; this instance also remembers the latest it imposed or
 * was told of, for operators to list.
 *
 * @since 0.5.0
 */
public final class RateLimitLockouts {

	/** How many lock-outs this instance remembers for the list: a flood of locked-out keys keeps the latest. */
	static final int REMEMBERED = 1_000;

	private final RateLimiter limiter;

	private final Map<GroupKey, Long> remembered = new ConcurrentHashMap<>();

	RateLimitLockouts(RateLimiter limiter) {
		this.limiter = limiter;
	}

	/**
	 * Return the lock-outs this instance imposed or was told of by the store, that have not ended: those made through
	 * other instances are listed once one of their requests reached this one. The latest {@value #REMEMBERED} at most.
	 * @return the lock-outs, the one that ends last first
	 */
	public List<LockedOut> lockedOut() {
		long now = now();
		this.remembered.values().removeIf((until) -> until <= now);
		List<LockedOut> shown = new ArrayList<>(this.remembered.size());
		this.remembered.forEach((locked, until) -> shown.add(new LockedOut(locked.group(), locked.key(), until)));
		shown.sort(Comparator.comparingLong(LockedOut::untilEpochMillis).reversed());
		return shown;
	}

	/**
	 * End a key's lock-out of a policy's penalty group, on every instance sharing the store (their deny caches are
	 * told, as of any reset). Nothing for a policy of no group.
	 * @param spec the policy
	 * @param key the key, as the policy counts it
	 */
	public void unlock(PolicySpec spec, String key) {
		Penalty penalty = spec.penalty();
		if (penalty != null) {
			this.limiter.reset(penalty.lock(), key);
			this.remembered.remove(new GroupKey(penalty.group(), key));
		}
	}

	/**
	 * What a layer's limits show once its penalty groups' checks are read and the keys that broke a policy with a
	 * penalty are locked out: a locked-out key is rejected by the policy that drew the group, with the rest of its
	 * lock-out as the wait ({@link Decision.Origin#PENALTY}). A lock-out takes store calls: on the executor when the
	 * request names one (a non-blocking stack), else on the calling thread.
	 * @return a stage with the limits applied, completed at once unless a key is to be locked out off the caller's
	 * thread
	 */
	CompletionStage<List<AppliedRateLimit>> applied(LayerPlan plan, @Nullable Admission admission,
			List<AppliedRateLimit> applied, @Nullable Executor executor) {
		if (admission == null || plan.checksFrom() == plan.acquisitions().size()) {
			return CompletableFuture.completedFuture(applied);
		}
		Map<String, AppliedRateLimit> locked = new LinkedHashMap<>(2);
		for (int i = plan.checksFrom(); i < plan.acquisitions().size(); i++) {
			Decision check = admission.decision(i);
			if (check != null && !check.allowed()) {
				PolicySpec spec = plan.enforced().get(i);
				Penalty penalty = spec.penalty();
				boolean failedClosed = check.origin() == Decision.Origin.FAIL_CLOSED;
				if (!failedClosed && penalty != null) {
					remember(penalty, plan.acquisitions().get(i).key(), check.retryAfterMillis());
				}
				locked.put(spec.policy().name(), new AppliedRateLimit(spec.policy(),
						failedClosed ? check : lockedOut(spec.policy(), check.retryAfterMillis()),
						spec.isSharedByEveryClient()));
			}
		}
		List<Integer> breaks = new ArrayList<>(0);
		for (int i = 0; i < plan.checksFrom(); i++) {
			PolicySpec spec = plan.enforced().get(i);
			Penalty penalty = spec.penalty();
			if (penalty != null && penalty.locks() && !locked.containsKey(spec.policy().name())
					&& broke(admission.decision(i))) {
				breaks.add(i);
			}
		}
		if (breaks.isEmpty()) {
			return CompletableFuture.completedFuture(locked.isEmpty() ? applied : replaced(applied, locked));
		}
		Runnable lockOut = () -> {
			for (int i : breaks) {
				PolicySpec spec = plan.enforced().get(i);
				long waitMillis = lock(spec, plan.acquisitions().get(i).key());
				if (waitMillis > 0) {
					locked.put(spec.policy().name(),
							new AppliedRateLimit(spec.policy(), lockedOut(spec.policy(), waitMillis),
									spec.isSharedByEveryClient()));
				}
			}
		};
		return run(lockOut, executor).thenApply((ignored) -> replaced(applied, locked));
	}

	/**
	 * Lock out the keys of policies with a penalty that their requests broke once their outcome was known.
	 * @return a stage that completes once they are locked out (or could not be)
	 */
	CompletableFuture<Void> lockOut(List<PolicySpec> specs, List<String> keys, @Nullable Executor executor) {
		return run(() -> {
			for (int i = 0; i < specs.size(); i++) {
				lock(specs.get(i), keys.get(i));
			}
		}, executor);
	}

	/**
	 * Run store calls on the executor, or here without one; never completes exceptionally. An executor that refuses
	 * them (saturated) leaves the keys as they are: the policies still reject them by their counts.
	 */
	private static CompletableFuture<Void> run(Runnable calls, @Nullable Executor executor) {
		if (executor == null) {
			calls.run();
			return CompletableFuture.completedFuture(null);
		}
		try {
			return CompletableFuture.runAsync(calls, executor).exceptionally((failure) -> null);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.completedFuture(null);
		}
	}

	/** Whether the policy's own decision is a break: a rejection of its counts, not of a failing store. */
	private static boolean broke(@Nullable Decision decision) {
		return decision != null && !decision.allowed() && decision.retryAfterMillis() != Decision.NEVER
				&& (decision.origin() == Decision.Origin.STORE || decision.origin() == Decision.Origin.DENY_CACHE
						|| decision.origin() == Decision.Origin.LEASE);
	}

	/**
	 * Lock a key out of a policy's penalty group for the penalty: take nearly the whole bucket, then settle to the
	 * lock-out's cost (see {@link Penalty}). A key locked out already, or being locked out by another instance, stays
	 * as it is.
	 * @return the wait until the key's lock-out ends, or {@code 0} if it could not be locked out (the store failed
	 * open)
	 */
	long lock(PolicySpec spec, String key) {
		Penalty penalty = spec.penalty();
		if (penalty == null || !penalty.locks()) {
			return 0;
		}
		Admission check = this.limiter.tryAcquireAll(List.of(new Acquisition(penalty.lock(), key, Penalty.LOCK_TAKE)));
		Decision decision = check.decision(0);
		if (decision == null || decision.origin() == Decision.Origin.FAIL_OPEN
				|| decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return 0;
		}
		if (!decision.allowed()) {
			// Locked out already: the wait of one unit. Or being locked out by another instance, between its calls.
			long wait = penalty.checkWait(decision.retryAfterMillis());
			remember(penalty, key, wait);
			return wait;
		}
		check.settle(0, penalty.lockCost(decision.remaining()));
		remember(penalty, key, penalty.lockMillis());
		return penalty.lockMillis();
	}

	/** A rejection by a policy of a locked-out key's group: nothing left until the lock-out ends. */
	private static Decision lockedOut(RateLimitPolicy policy, long waitMillis) {
		return new Decision(false, policy.capacity(), 0, waitMillis, waitMillis, waitMillis, Decision.Origin.PENALTY);
	}

	/** The limits with the decisions of locked-out policies in place of their own. */
	private static List<AppliedRateLimit> replaced(List<AppliedRateLimit> applied, Map<String, AppliedRateLimit> locked) {
		if (locked.isEmpty()) {
			return applied;
		}
		List<AppliedRateLimit> replaced = new ArrayList<>(applied.size() + locked.size());
		for (AppliedRateLimit limit : applied) {
			if (!locked.containsKey(limit.policy().name())) {
				replaced.add(limit);
			}
		}
		replaced.addAll(locked.values());
		return replaced;
	}

	private void remember(Penalty penalty, String key, long waitMillis) {
		long until = now() + waitMillis;
		if (this.remembered.size() >= REMEMBERED) {
			long now = now();
			this.remembered.values().removeIf((end) -> end <= now);
			if (this.remembered.size() >= REMEMBERED) {
				this.remembered.entrySet()
					.stream()
					.min(Map.Entry.comparingByValue())
					.ifPresent((soonest) -> this.remembered.remove(soonest.getKey()));
			}
		}
		this.remembered.put(new GroupKey(penalty.group(), key), until);
	}

	private long now() {
		return this.limiter.store().currentTimeMillis();
	}

	/**
	 * A key locked out of a penalty group.
	 *
	 * @param group the penalty group
	 * @param key the key, as its policies count it
	 * @param untilEpochMillis when the lock-out ends, as this instance last learned it
	 */
	public record LockedOut(String group, String key, long untilEpochMillis) {
	}

	private record GroupKey(String group, String key) {
	}

}
