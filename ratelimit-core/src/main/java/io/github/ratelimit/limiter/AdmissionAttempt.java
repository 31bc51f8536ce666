package io.github.ratelimit.limiter;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.store.StoreKeys;
import org.jspecify.annotations.Nullable;

/**
 * One all-or-nothing decision of a {@link RateLimiter} under way. It is decided in two steps, so that the store
 * can be asked by a thread that waits for it or by one that does not, and both decide alike: {@link #beforeStore}
 * answers what needs no store (a cost that never fits, a cached denial) and takes the circuit breakers'
 * permissions; {@link #afterStore} or {@link #afterFailure} settle the store's answer, the failed parts by their
 * policies' failure modes.
 */
final class AdmissionAttempt {

	private final LimiterParts parts;

	private final RateLimitStore store;

	private final List<Acquisition> acquisitions;

	private final int size;

	private final @Nullable Decision[] decisions;

	private final long[] countedAt;

	/** Per acquisition, the store that holds its units, or {@code null} when nothing is held. */
	private final @Nullable RateLimitStore[] heldBy;

	private final long now;

	/** The limiter's resets when this attempt began: a denial decided across a reset is not cached. */
	private final long resets;

	/** Whether what this attempt gives back must not make the calling thread wait. */
	private final boolean nonBlocking;

	private final CircuitBreaker[] breakerOf;

	private final List<CircuitBreaker> breakers = new ArrayList<>(2);

	private final List<CircuitBreaker.Permission> permissions = new ArrayList<>(2);

	private final boolean[] failed;

	/** The indexes of the acquisitions the store is asked about: those whose part's circuit is not open. */
	private final List<Integer> asked;

	private @Nullable CompletionStage<Void> givingBack;

	AdmissionAttempt(LimiterParts parts, List<Acquisition> acquisitions, long now, long resets, boolean nonBlocking) {
		if (acquisitions.isEmpty()) {
			throw new IllegalArgumentException("'acquisitions' must not be empty");
		}
		this.parts = parts;
		this.store = parts.asked();
		this.acquisitions = bounded(acquisitions);
		this.size = acquisitions.size();
		this.decisions = new Decision[this.size];
		this.countedAt = new long[this.size];
		this.heldBy = new RateLimitStore[this.size];
		this.now = now;
		this.resets = resets;
		this.nonBlocking = nonBlocking;
		this.breakerOf = new CircuitBreaker[this.size];
		this.failed = new boolean[this.size];
		this.asked = new ArrayList<>(this.size);
	}

	/**
	 * Decide what needs no store, and take each asked part's permission to call.
	 * @return the admission if the store is not to be asked, else {@code null}: ask it about {@link #toAsk()}
	 */
	@Nullable Admission beforeStore() {
		boolean neverFits = false;
		for (int i = 0; i < this.size; i++) {
			RateLimitPolicy policy = this.acquisitions.get(i).policy();
			if (this.acquisitions.get(i).cost() > policy.capacity() && !this.parts.unlimited()) {
				this.decisions[i] = this.parts.notify(policy, RateLimiter.neverFits(policy));
				neverFits = true;
			}
		}
		if (neverFits) {
			return admission(); // no store admits it: not worth a call
		}
		Denials denials = this.parts.denials();
		if (!denials.isOff()) {
			boolean denied = false;
			for (int i = 0; i < this.size; i++) {
				Acquisition acquisition = this.acquisitions.get(i);
				Decision cached = denials.cached(acquisition.policy(), acquisition.key(), acquisition.cost(),
						this.now);
				if (cached != null) {
					this.decisions[i] = this.parts.notify(acquisition.policy(), cached);
					denied = true;
				}
			}
			if (denied) {
				return admission();
			}
		}
		// Each part of the store (a Cluster master, a group of DynamoDB keys) is asked, or not, on its own breaker.
		for (int i = 0; i < this.size; i++) {
			CircuitBreaker breaker = this.parts.breakerOf(this.acquisitions.get(i));
			this.breakerOf[i] = breaker;
			int b = this.breakers.indexOf(breaker);
			if (b < 0) {
				this.breakers.add(breaker);
				this.permissions.add(breaker.tryCall(this.now));
				b = this.breakers.size() - 1;
			}
			this.failed[i] = this.permissions.get(b) == CircuitBreaker.Permission.SKIP;
			if (!this.failed[i]) {
				this.asked.add(i);
			}
		}
		return this.asked.isEmpty() ? settleFailedParts(null) : null;
	}

	/**
	 * Return the acquisitions to ask the store about, once {@link #beforeStore()} returned {@code null}.
	 */
	List<Acquisition> toAsk() {
		return (this.asked.size() == this.size) ? this.acquisitions
				: this.asked.stream().map(this.acquisitions::get).toList();
	}

	/**
	 * Settle the store's answer to {@link #toAsk()}.
	 */
	Admission afterStore(Reservation reservation) {
		reportToBreakers(null, null);
		boolean storeRejected = !reservation.allowed();
		Denials denials = this.parts.denials();
		for (int j = 0; j < this.asked.size(); j++) {
			int i = this.asked.get(j);
			Acquisition acquisition = this.acquisitions.get(i);
			Decision decision = reservation.decisions().get(j);
			denials.remember(acquisition.policy(), acquisition.key(), acquisition.cost(), decision, this.now,
					this.resets);
			this.decisions[i] = decision;
			this.countedAt[i] = reservation.countedAt(j);
			this.heldBy[i] = storeRejected ? null : this.store;
		}
		if (storeRejected) {
			// Rejected by the parts that decided: the failed parts' policies could not change that.
			for (int i = 0; i < this.size; i++) {
				Acquisition acquisition = this.acquisitions.get(i);
				if (this.failed[i]) {
					this.parts.failureModes().logFailure(acquisition.policy(), this.now, null);
					this.decisions[i] = OneByOne.notDecided(acquisition);
				}
				this.decisions[i] = this.parts.notify(acquisition.policy(), Objects.requireNonNull(this.decisions[i]));
			}
			return admission();
		}
		return settleFailedParts(null);
	}

	/**
	 * Settle the store's failure to answer about {@link #toAsk()}: a programming error ({@link IllegalArgumentException})
	 * is thrown again, an outage decided by the failure modes.
	 */
	Admission afterFailure(RuntimeException failure) {
		if (failure instanceof IllegalArgumentException) {
			releasePermissions(); // a programming error, not an outage: a probe must not stay taken by it
			throw failure;
		}
		if (failure instanceof PartialStoreFailureException partial) {
			boolean[] partFailed = new boolean[this.size];
			for (int j = 0; j < this.asked.size(); j++) {
				int i = this.asked.get(j);
				partFailed[i] = partial.failed(j);
				if (partFailed[i]) {
					this.failed[i] = true;
				}
				else {
					this.decisions[i] = partial.decision(j);
					this.countedAt[i] = partial.countedAt(j);
					this.heldBy[i] = this.store;
				}
			}
			reportToBreakers(partFailed, failure);
			return settleFailedParts(failure);
		}
		for (int i : this.asked) {
			this.failed[i] = true;
		}
		reportToBreakers(this.failed, failure);
		return settleFailedParts(failure);
	}

	/**
	 * Give back each part's permission without a verdict: the attempt ended in an error that says nothing of the
	 * store.
	 */
	void releasePermissions() {
		for (int b = 0; b < this.breakers.size(); b++) {
			this.breakers.get(b).release(this.permissions.get(b));
		}
	}

	/**
	 * Return a stage that completes with the admission once what it gave back without waiting is given back, so that
	 * the next request of the client finds it.
	 */
	CompletionStage<Admission> givenBack(Admission admission) {
		CompletionStage<Void> givingBack = this.givingBack;
		return (givingBack != null) ? givingBack.handle((ignored, failure) -> admission)
				: CompletableFuture.completedFuture(admission);
	}

	/**
	 * Tell each breaker whether its part answered: a part fails if any acquisition on it failed.
	 * @param partFailed per acquisition, whether its part failed; {@code null} if none did
	 */
	private void reportToBreakers(boolean @Nullable [] partFailed, @Nullable RuntimeException failure) {
		long failedAt = (failure != null) ? this.parts.clock().currentTimeMillis() : 0;
		for (int b = 0; b < this.breakers.size(); b++) {
			CircuitBreaker breaker = this.breakers.get(b);
			boolean askedHere = false;
			boolean failedHere = false;
			for (int i : this.asked) {
				if (this.breakerOf[i] == breaker) {
					askedHere = true;
					failedHere |= partFailed != null && partFailed[i];
				}
			}
			if (!askedHere) {
				continue; // skipped: its circuit is open
			}
			if (failedHere && failure != null) {
				breaker.onFailure(failedAt, this.permissions.get(b), failure);
			}
			else {
				breaker.onSuccess();
			}
		}
	}

	/**
	 * Decide the acquisitions whose part of the store failed by their policies' failure modes (the in-memory
	 * fallback decides the {@code LOCAL} ones together), then the request all or nothing: if any answer rejects it,
	 * what the store and the fallback hold for it is given back.
	 */
	private Admission settleFailedParts(@Nullable RuntimeException failure) {
		List<Acquisition> local = new ArrayList<>();
		List<Integer> localIndexes = new ArrayList<>();
		boolean allowed = true;
		for (int i = 0; i < this.size; i++) {
			if (!this.failed[i]) {
				allowed &= Objects.requireNonNull(this.decisions[i]).allowed();
				continue;
			}
			Acquisition acquisition = this.acquisitions.get(i);
			RateLimitPolicy policy = acquisition.policy();
			if (policy.failureMode() == FailureMode.LOCAL) {
				local.add(acquisition);
				localIndexes.add(i);
				this.parts.failureModes().logFailure(policy, this.now, failure);
			}
			else {
				this.decisions[i] = this.parts.failureModes().onStoreFailure(policy, acquisition.key(),
						acquisition.cost(), this.now, this.breakerOf[i], failure);
				allowed &= this.decisions[i].allowed();
			}
		}
		RateLimitStore fallbackStore = this.parts.failureModes().fallbackStore();
		Reservation fallback = local.isEmpty() ? null : fallbackStore.tryAcquireAll(local);
		if (fallback != null) {
			allowed &= fallback.allowed();
			for (int j = 0; j < local.size(); j++) {
				int i = localIndexes.get(j);
				this.decisions[i] = fallback.decisions().get(j).withOrigin(Decision.Origin.LOCAL_FALLBACK);
				this.countedAt[i] = fallback.countedAt(j);
				this.heldBy[i] = fallback.allowed() ? fallbackStore : null;
			}
		}
		if (!allowed) {
			giveBackWhatOthersTook();
		}
		for (int i = 0; i < this.size; i++) {
			if (!this.failed[i] || (fallback != null && localIndexes.contains(i))) {
				this.decisions[i] = this.parts.notify(this.acquisitions.get(i).policy(),
						Objects.requireNonNull(this.decisions[i]));
			}
		}
		return admission();
	}

	/** Rejected by a failure mode, or by the fallback: what the others took is given back, in one call each. */
	private void giveBackWhatOthersTook() {
		List<Integer> taken = new ArrayList<>();
		for (int i = 0; i < this.size; i++) {
			if (this.heldBy[i] != null) {
				taken.add(i);
			}
		}
		if (taken.isEmpty()) {
			return;
		}
		int[] indexes = taken.stream().mapToInt(Integer::intValue).toArray();
		Admission holding = admission();
		if (this.nonBlocking) {
			this.givingBack = holding.refundAsync(indexes);
		}
		else {
			holding.refund(indexes);
		}
		for (int i : indexes) {
			this.decisions[i] = OneByOne.givenBack(Objects.requireNonNull(this.decisions[i]),
					this.acquisitions.get(i).cost());
		}
	}

	private Admission admission() {
		return new Admission(this.parts.adjustments(), this.acquisitions, this.decisions, this.countedAt, this.heldBy);
	}

	/** The admission once the store answered or failed, without waiting for it. */
	Admission afterAnswer(@Nullable Reservation reservation, @Nullable Throwable failure) {
		if (failure == null) {
			return this.afterStore(Objects.requireNonNull(reservation));
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		if (cause instanceof RuntimeException ex) {
			return this.afterFailure(ex);
		}
		if (cause instanceof Error error) {
			this.releasePermissions();
			throw error;
		}
		// A checked exception through a stage: the store could not decide.
		return this.afterFailure(new RateLimitStoreException("Rate limit store failed: " + cause, cause));
	}

	/** The acquisitions with their keys bounded as the store keeps them (see {@link StoreKeys#bounded}). */
	private static List<Acquisition> bounded(List<Acquisition> acquisitions) {
		List<Acquisition> bounded = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			String key = StoreKeys.bounded(acquisition.key());
			bounded.add(key.equals(acquisition.key()) ? acquisition
					: new Acquisition(acquisition.policy(), key, acquisition.cost()));
		}
		return bounded;
	}

}
