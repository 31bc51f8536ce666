package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.limiter.Admission;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.StoreKeys;
import io.github.ratelimit.web.AppliedRateLimit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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

	private static final Log logger = LogFactory.getLog(RateLimitLockouts.class);

	private final RateLimiter limiter;

	private final ThrottledWarning lockFailure = new ThrottledWarning(logger);

	/** By group and key, the lock-outs this instance knows of, the oldest learned first. */
	private final Map<GroupKey, LockedOut> remembered = new LinkedHashMap<>();

	/** Whether {@link #remembered} may hold any: an admitted check then needs no lock to forget its key. */
	private volatile boolean anyRemembered;

	RateLimitLockouts(RateLimiter limiter) {
		this.limiter = limiter;
	}

	/**
	 * Return the lock-outs this instance imposed or was told of by the store, that have not ended: those made through
	 * other instances are listed once one of their requests reached this one; one whose key's request this instance
	 * then admitted is gone. The latest {@value #REMEMBERED} at most, keys longer than {@value StoreKeys#MAX_KEY_BYTES}
	 * bytes left out.
	 * @return the lock-outs, the one that ends last first
	 */
	public List<LockedOut> lockedOut() {
		long now = now();
		List<LockedOut> shown;
		synchronized (this.remembered) {
			this.remembered.values().removeIf((locked) -> locked.untilEpochMillis() <= now);
			this.anyRemembered = !this.remembered.isEmpty();
			shown = new ArrayList<>(this.remembered.values());
		}
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
			this.limiter.reset(penalty.lock(), penalty.lockKey(key));
			forget(penalty, key);
		}
	}

	/**
	 * What a layer's limits show once its penalty groups' checks are read and the keys that broke a policy with a
	 * penalty are locked out: a locked-out key is rejected by the policy that drew the group, with the rest of its
	 * lock-out as the wait ({@link Decision.Origin#PENALTY}), unless the policy's own rejection lasts longer. A
	 * lock-out takes store calls: on the executor when the request names one (a non-blocking stack), else on the
	 * calling thread.
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
			PolicySpec spec = plan.enforced().get(i);
			Penalty penalty = spec.penalty();
			if (check == null || penalty == null) {
				continue;
			}
			int own = ownIndex(plan, spec);
			String key = plan.acquisitions().get(own).key();
			if (check.allowed()) {
				forget(penalty, key);
			}
			else if (check.origin() == Decision.Origin.FAIL_CLOSED) {
				locked.put(spec.policy().name(), applied(plan, own, check)); // 503, as its own policy's
			}
			else {
				remember(spec, key, check.retryAfterMillis());
				locked.put(spec.policy().name(), applied(plan, own, lockedOut(plan, own, check.retryAfterMillis())));
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
				long waitMillis = lock(plan.enforced().get(i), plan.acquisitions().get(i).key());
				if (waitMillis > 0) {
					locked.put(plan.enforced().get(i).policy().name(),
							applied(plan, i, lockedOut(plan, i, waitMillis)));
				}
			}
		};
		return run(lockOut, executor).thenApply((ignored) -> replaced(applied, locked));
	}

	/** The index of the acquisition of a policy's own limits, whose key and variant (plan, tenant) its check has. */
	private static int ownIndex(LayerPlan plan, PolicySpec spec) {
		for (int i = 0; i < plan.checksFrom(); i++) {
			if (plan.enforced().get(i) == spec) {
				return i;
			}
		}
		throw new IllegalStateException("A check of policy '" + spec.policy().name() + "' without its own limits");
	}

	private static AppliedRateLimit applied(LayerPlan plan, int own, Decision decision) {
		return new AppliedRateLimit(plan.real(own), decision,
				plan.enforced().get(own).isSharedByEveryClient());
	}

	/** Whether the policy's own decision is a break: a rejection of its counts, not of a failing store. */
	private static boolean broke(@Nullable Decision decision) {
		return decision != null && !decision.allowed() && decision.retryAfterMillis() != Decision.NEVER
				&& (decision.origin() == Decision.Origin.STORE || decision.origin() == Decision.Origin.DENY_CACHE
						|| decision.origin() == Decision.Origin.LEASE);
	}

	/**
	 * Lock out the keys of policies with a penalty whose counted outcome may have used their last unit, once what
	 * the request's layer gave back is given back: those the store then says have no unit left. A request counted
	 * while others of the key were in flight may have seen no unit left that their outcomes then gave back.
	 * @return a stage that completes once they are locked out (or could not be)
	 */
	CompletableFuture<Void> lockOutIfSpent(List<PolicySpec> specs, List<Acquisition> acquisitions,
			@Nullable Executor executor) {
		return run(() -> {
			for (int i = 0; i < specs.size(); i++) {
				Acquisition acquisition = acquisitions.get(i);
				if (this.limiter.peek(acquisition.policy(), acquisition.key()).remaining() == 0) {
					lock(specs.get(i), acquisition.key());
				}
			}
		}, executor);
	}

	/**
	 * Run store calls on the executor, or here without one; never completes exceptionally, and never throws. An
	 * executor that refuses them (saturated), or a store that fails them, leaves the keys as they are: the policies
	 * still reject them by their counts.
	 */
	private CompletableFuture<Void> run(Runnable calls, @Nullable Executor executor) {
		Runnable guarded = () -> {
			try {
				calls.run();
			}
			catch (RuntimeException ex) {
				this.lockFailure.warn("A rate limit lock-out could not be made (" + ex + "); the key is rejected by "
						+ "its policy's counts only");
			}
		};
		if (executor == null) {
			guarded.run();
			return CompletableFuture.completedFuture(null);
		}
		try {
			return CompletableFuture.runAsync(guarded, executor);
		}
		catch (RejectedExecutionException ex) {
			this.lockFailure.warn("A rate limit lock-out could not be made: " + ex.getMessage());
			return CompletableFuture.completedFuture(null);
		}
	}

	/**
	 * Lock a key out of a policy's penalty group for the penalty: take nearly the whole bucket, then settle to the
	 * lock-out's cost (see {@link Penalty}). A key locked out already stays as it is.
	 * @return the wait until the key's lock-out ends, or {@code 0} if it is not locked out (the store failed open,
	 * or the bucket is refilling after a lock-out that ended)
	 */
	long lock(PolicySpec spec, String key) {
		Penalty penalty = spec.penalty();
		if (penalty == null || !penalty.locks()) {
			return 0;
		}
		Admission take = this.limiter
			.tryAcquireAll(List.of(new Acquisition(penalty.lock(), penalty.lockKey(key), Penalty.LOCK_TAKE)));
		Decision decision = take.decision(0);
		if (decision == null || decision.origin() == Decision.Origin.FAIL_OPEN
				|| decision.origin() == Decision.Origin.FAIL_CLOSED) {
			return 0;
		}
		if (!decision.allowed()) {
			// The deny cache answers with a check's wait; the store with the take's.
			long wait = (decision.origin() == Decision.Origin.DENY_CACHE) ? decision.retryAfterMillis()
					: penalty.checkWait(decision.retryAfterMillis());
			if (wait > 0) {
				remember(spec, key, wait);
			}
			return wait;
		}
		take.settle(0, penalty.lockCost(decision.remaining()));
		remember(spec, key, penalty.lockMillis());
		return penalty.lockMillis();
	}

	/** A rejection by a policy of a locked-out key's group: nothing left until the lock-out ends. */
	private static Decision lockedOut(LayerPlan plan, int own, long waitMillis) {
		RateLimitPolicy policy = plan.real(own);
		return new Decision(false, policy.capacity(), 0, waitMillis, waitMillis, waitMillis, Decision.Origin.PENALTY);
	}

	/**
	 * The limits with the decisions of locked-out policies in place of their own, unless their own rejection lasts
	 * longer (a daily quota spent: the client would come back after the lock-out only to be turned away again).
	 */
	private static List<AppliedRateLimit> replaced(List<AppliedRateLimit> applied, Map<String, AppliedRateLimit> locked) {
		if (locked.isEmpty()) {
			return applied;
		}
		List<AppliedRateLimit> replaced = new ArrayList<>(applied.size() + locked.size());
		for (AppliedRateLimit limit : applied) {
			AppliedRateLimit lockedOut = locked.get(limit.policy().name());
			if (lockedOut != null && !limit.decision().allowed()
					&& limit.decision().retryAfterMillis() > lockedOut.decision().retryAfterMillis()) {
				locked.remove(limit.policy().name());
			}
			if (!locked.containsKey(limit.policy().name())) {
				replaced.add(limit);
			}
		}
		replaced.addAll(locked.values());
		return replaced;
	}

	private void remember(PolicySpec spec, String key, long waitMillis) {
		Penalty penalty = spec.penalty();
		if (penalty == null || key.length() > StoreKeys.MAX_KEY_BYTES) {
			return; // a key that long is the store's hash: not worth its memory here
		}
		LockedOut locked = new LockedOut(penalty.group(), spec.policy().name(), key, now() + waitMillis);
		synchronized (this.remembered) {
			GroupKey groupKey = new GroupKey(penalty.group(), key);
			if (this.remembered.remove(groupKey) == null && this.remembered.size() >= REMEMBERED) {
				this.remembered.remove(this.remembered.keySet().iterator().next());
			}
			this.remembered.put(groupKey, locked);
			this.anyRemembered = true;
		}
	}

	private void forget(Penalty penalty, String key) {
		if (this.anyRemembered) {
			synchronized (this.remembered) {
				this.remembered.remove(new GroupKey(penalty.group(), key));
				this.anyRemembered = !this.remembered.isEmpty();
			}
		}
	}

	private long now() {
		return this.limiter.store().currentTimeMillis();
	}

	/**
	 * A key locked out of a penalty group.
	 *
	 * @param group the penalty group
	 * @param policy a policy of the group, that broke or that turned the key away: a reset of the key under it
	 * unlocks the key
	 * @param key the key, as its policies count it
	 * @param untilEpochMillis when the lock-out ends, as this instance last learned it
	 */
	public record LockedOut(String group, String policy, String key, long untilEpochMillis) {
	}

	private record GroupKey(String group, String key) {
	}

}
