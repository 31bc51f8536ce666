package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Where counters live. A store makes each decision atomically: concurrent calls for the same key, from any number
 * of threads or instances sharing the store, never lose or double a count.
 *
 * @since 0.1.0
 */
public interface RateLimitStore {

	/**
	 * Take {@code cost} units for {@code key} under {@code policy} if they are available, atomically. A rejected
	 * request takes nothing; a request whose cost exceeds {@link RateLimitPolicy#capacity()} is rejected with
	 * {@link Decision#NEVER} as its retry delay.
	 * @param policy the policy to enforce
	 * @param key the counter key within the policy, at most a few hundred characters
	 * @param cost the units this request takes, at least 1
	 * @return the decision
	 * @throws RateLimitStoreException if the store cannot decide (unreachable, too slow)
	 */
	Decision tryAcquire(RateLimitPolicy policy, String key, long cost);

	/**
	 * Take the units of every acquisition, or of none: a request that several limits apply to passes only if every
	 * one of them admits it, and one rejected by any of them consumes nothing from any of them. The acquisitions are
	 * of different policies (or keys).
	 * <p>
	 * This default asks for each in turn and, when any is rejected, gives back what the others took: exact in what
	 * stays counted, though a concurrent request may briefly see the units of a request about to be rejected. Stores
	 * that can decide several keys in one atomic step (a Redis script) override it.
	 * @param acquisitions the acquisitions, at least one
	 * @return the decisions, and the times the admitted ones were counted at
	 * @throws PartialStoreFailureException if some parts of a partitioned store decided and others could not, and
	 * none rejected: the admitted acquisitions keep their units, for the caller to keep or give back
	 * @throws RateLimitStoreException if the store cannot decide; nothing stays taken as far as the store could
	 * be reached
	 * @since 0.2.0
	 */
	default Reservation tryAcquireAll(List<Acquisition> acquisitions) {
		return OneByOne.tryAcquireAll(acquisitions, this::currentTimeMillis,
				(acquisition, now) -> tryAcquire(acquisition.policy(), acquisition.key(), acquisition.cost()), this);
	}

	/**
	 * Decide as {@link #tryAcquireAll} does, without making the calling thread wait for the store: what a
	 * non-blocking web stack (WebFlux, a gateway) asks on its event loop. The stage completes with what
	 * {@code tryAcquireAll} would return, or exceptionally with what it would throw, within the store's own timeout.
	 * <p>
	 * This default decides on the calling thread, which is right for a store in this process. A store that calls out
	 * over the network overrides it, so that no thread waits for the answer.
	 * @param acquisitions the acquisitions, at least one
	 * @return the decisions, and the times the admitted ones were counted at
	 * @since 0.2.0
	 */
	default CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions) {
		try {
			return CompletableFuture.completedFuture(tryAcquireAll(acquisitions));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Return the state of {@code key} under {@code policy} as its next request would find it, taking nothing and
	 * keeping nothing: what an operator reads. By default a request that costs more than the capacity, which every
	 * store rejects without counting; stores that would otherwise keep state for an unknown key override it.
	 * @param policy the policy
	 * @param key the counter key within the policy
	 * @return a rejection that tells the remaining units and the reset
	 * @throws RateLimitStoreException if the store cannot be reached
	 * @since 0.2.0
	 */
	default Decision peek(RateLimitPolicy policy, String key) {
		return tryAcquire(policy, key, policy.capacity() + 1);
	}

	/**
	 * Give back the units an admitted acquisition took, to the window that counted them: for a request whose
	 * policy counts only some outcomes (failed logins, say), or whose other limits rejected it. If that window has
	 * passed or the key was reset meanwhile, nothing changes: a refund never creates capacity that was not taken.
	 * @param acquisition the acquisition, as admitted
	 * @param countedAtMillis the time it was counted at (see {@link Reservation#countedAt(int)}; for
	 * {@link #tryAcquire}, the time of the store's clock when it decided)
	 * @throws RateLimitStoreException if the store cannot be reached
	 * @throws UnsupportedOperationException if the store cannot give units back
	 * @since 0.2.0
	 */
	default void refund(Acquisition acquisition, long countedAtMillis) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot give units back");
	}

	/**
	 * Give back the units of several admitted acquisitions, as {@link #refund} does for each: what one request's
	 * layer gives back once its outcome is known. This default gives back one by one; stores that can give several
	 * back in one call (a Redis script) override it. An acquisition that cannot be given back keeps its units.
	 * @param acquisitions the acquisitions, as admitted
	 * @param countedAtMillis for each, the time it was counted at
	 * @throws RateLimitStoreException if the store cannot be reached (those given back before stay given back)
	 * @throws UnsupportedOperationException if the store cannot give units back
	 * @since 0.2.0
	 */
	default void refundAll(List<Acquisition> acquisitions, long[] countedAtMillis) {
		for (int i = 0; i < acquisitions.size(); i++) {
			refund(acquisitions.get(i), countedAtMillis[i]);
		}
	}

	/**
	 * Take more units for an admitted acquisition whose cost turned out higher than it reserved (a cost known only
	 * once the request was served: tokens generated, rows exported), whatever the key has left: the key may go over
	 * its limit, in debt, so that its next requests are rejected until it is repaid. Where it is repaid: a fixed or
	 * sliding window's count when the admission's window ends (the debt beyond the limit is then forgiven), a sliding
	 * log's entry when it leaves the window (exact), a bucket by its refill (exact). Nothing if the admission's window
	 * has passed or the key's state is gone.
	 * @param acquisition the acquisition, with the extra units as its cost
	 * @param countedAtMillis the time the acquisition was counted at
	 * @throws RateLimitStoreException if the store cannot be reached
	 * @throws UnsupportedOperationException if the store cannot
	 * @since 0.3.0
	 */
	default void charge(Acquisition acquisition, long countedAtMillis) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot charge a cost known late");
	}

	/**
	 * Give back the units of several admitted acquisitions as {@link #refundAll} does, without making the calling
	 * thread wait for the store. This default gives back on the calling thread; a store that calls out over the
	 * network overrides it.
	 * @param acquisitions the acquisitions, as admitted
	 * @param countedAtMillis for each, the time it was counted at
	 * @return a stage that completes once they are given back, or exceptionally with what {@code refundAll} would
	 * throw
	 * @since 0.2.0
	 */
	default CompletionStage<Void> refundAllAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		try {
			refundAll(acquisitions, countedAtMillis);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Return the time of this store's clock, as its decisions see it: what {@link #refund} is given for a decision
	 * of {@link #tryAcquire}. By default the system clock.
	 * @return milliseconds since the epoch
	 * @since 0.2.0
	 */
	default long currentTimeMillis() {
		return System.currentTimeMillis();
	}

	/**
	 * Forget the state of {@code key} under {@code policy}, so that its next request is decided as a new client's:
	 * what an operator does to unblock a customer. Keys of other policies and other keys are untouched.
	 * @param policy the policy
	 * @param key the counter key within the policy, as passed to {@link #tryAcquire}
	 * @throws RateLimitStoreException if the store cannot be reached
	 */
	void reset(RateLimitPolicy policy, String key);

	/**
	 * Forget every counter of this store (of a shared store, those under its own key prefix only, never the other
	 * data it holds): what tests do between cases. Decisions made meanwhile may keep their keys.
	 * @throws RateLimitStoreException if the store cannot be reached
	 * @throws UnsupportedOperationException if the store cannot do it
	 */
	default void clear() {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot forget all its counters");
	}

	/**
	 * Be told of the resets and clears made through any instance sharing this store (an operator's reset through
	 * another instance), so that what this instance remembers of the store's answers (its deny cache) is forgotten
	 * too. By default never: a store in one process has no other instance to hear from. A store that tells its
	 * instances does so on a best-effort channel: a reset whose message is lost is still done in the store.
	 * @param listener the listener
	 * @since 0.2.0
	 */
	default void addResetListener(ResetListener listener) {
	}

	/**
	 * Return where the changes made to policies at run time are kept for every instance sharing this store, or
	 * {@code null} if this store is this instance's alone (a change then applies to this instance only).
	 * @return the shared changes, or {@code null}
	 * @since 0.3.0
	 */
	default @Nullable SharedChanges sharedChanges() {
		return null;
	}

	/**
	 * Check that this store can enforce the policy: asked at start-up for every declared policy, so that what a store
	 * cannot do fails there rather than on the first request.
	 * @param policy the policy
	 * @throws IllegalArgumentException if it cannot, with a message naming what and what to use instead
	 */
	default void checkSupported(RateLimitPolicy policy) {
	}

	/**
	 * Check that the store can count a key that every request of the application shares under this policy (an
	 * application-wide quota): asked at start-up, and for each change at run time, for every policy whose key is the
	 * same for every request, and for each of its plans. A store whose keys each live on one node of limited speed
	 * refuses a limit that one node cannot take.
	 * @param policy the policy
	 * @throws IllegalArgumentException if it cannot, with a message naming what and what to do instead
	 * @since 0.3.0
	 */
	default void checkSharedKey(RateLimitPolicy policy) {
	}

	/**
	 * Return whether this store has parts that fail on their own (the nodes of a cluster), so that the limiter
	 * keeps a circuit breaker per part and asks {@link #partitionOf} before each decision.
	 * @return whether the store has parts
	 */
	default boolean isPartitioned() {
		return false;
	}

	/**
	 * Return which part of the store decides for this key (a cluster node's id, say), or {@code ""} for the store
	 * as a whole. Asked before every decision of a {@linkplain #isPartitioned() partitioned} store: it must be cheap
	 * and must not call out.
	 * @param policy the policy
	 * @param key the counter key within the policy
	 * @return the part's name, or {@code ""}
	 */
	default String partitionOf(RateLimitPolicy policy, String key) {
		return "";
	}

	/**
	 * Return whether this store keeps its counters in this process. The {@code RateLimiter} only caches rejections
	 * locally in front of stores that do not.
	 * @return whether the store is local to this process
	 */
	default boolean isLocal() {
		return false;
	}

}
