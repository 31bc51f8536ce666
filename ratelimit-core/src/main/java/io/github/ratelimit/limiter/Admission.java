package io.github.ratelimit.limiter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a request that several limits apply to: passed only if every one of them admitted it; rejected, it
 * holds nothing from any of them. Until {@linkplain #refund(int) refunded}, an admitted request holds what each
 * policy counted for it, where it was counted (the store, or the in-memory fallback).
 *
 * @since 0.2.0
 */
public final class Admission {

	private final List<Acquisition> acquisitions;

	private final @Nullable Decision[] decisions;

	private final long[] countedAt;

	/** Per acquisition, the store that holds its units, or {@code null} when nothing is held. */
	private final @Nullable RateLimitStore[] heldBy;

	private final Adjustments adjustments;

	Admission(Adjustments adjustments, List<Acquisition> acquisitions, @Nullable Decision[] decisions, long[] countedAt,
			@Nullable RateLimitStore[] heldBy) {
		this.adjustments = adjustments;
		this.acquisitions = new ArrayList<>(acquisitions); // a settled cost replaces the reserved one
		this.decisions = decisions;
		this.countedAt = countedAt;
		this.heldBy = heldBy;
	}

	/**
	 * Return whether every limit admitted the request.
	 * @return whether it may pass
	 */
	public boolean allowed() {
		for (Decision decision : this.decisions) {
			if (decision != null && !decision.allowed()) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return how many acquisitions were decided together.
	 * @return the number of acquisitions
	 */
	public int size() {
		return this.acquisitions.size();
	}

	/**
	 * Return the decision of one acquisition, or {@code null} if it was not asked about: a cached rejection of
	 * another one rejected the request before any store was asked.
	 * @param index the acquisition's index, in the order given
	 * @return the decision, or {@code null}
	 */
	public @Nullable Decision decision(int index) {
		return this.decisions[index];
	}

	/**
	 * Give back the units one admitted acquisition holds (count by outcome: this request's outcome does not count
	 * for that policy). Does nothing if it holds none, or was refunded already. A store that cannot be reached keeps
	 * the units: the client is counted once more than it should, never less.
	 * @param index the acquisition's index
	 */
	public void refund(int index) {
		RateLimitStore store = release(index);
		if (store != null) {
			this.adjustments.refund(store, List.of(this.acquisitions.get(index)), new long[] { this.countedAt[index] });
		}
	}

	/**
	 * Give back the units several admitted acquisitions hold, in one store call where the store can (one Redis
	 * script call, or one per hash slot on a Cluster), as {@link #refund(int)} does for each.
	 * @param indexes the acquisitions' indexes
	 */
	public void refund(int... indexes) {
		if (indexes.length == 1) {
			refund(indexes[0]);
			return;
		}
		heldByStore(indexes).forEach((store, held) -> this.adjustments.refund(store, held.acquisitions, held.countedAt));
	}

	/**
	 * Give back the units several admitted acquisitions hold, as {@link #refund(int...)} does, without making the
	 * calling thread wait for the store (see {@link RateLimitStore#refundAllAsync}): what a non-blocking web stack
	 * does once a response's outcome is known.
	 * @param indexes the acquisitions' indexes
	 * @return a stage that completes once they are given back, or could not be (the store then keeps them); never
	 * exceptionally
	 * @since 0.2.0
	 */
	public CompletionStage<Void> refundAsync(int... indexes) {
		List<CompletableFuture<Void>> given = new ArrayList<>(1);
		heldByStore(indexes).forEach((store, held) -> given
			.add(this.adjustments.refundAsync(store, held.acquisitions, held.countedAt).toCompletableFuture()));
		return (given.size() == 1) ? given.get(0) : CompletableFuture.allOf(given.toArray(new CompletableFuture<?>[0]));
	}

	/**
	 * Settle what one admitted acquisition costs, once the request is served and its cost known: the units reserved
	 * beyond it are given back, the units it cost beyond them are taken whatever the key has left (see
	 * {@link RateLimitStore#charge}: the key may go into debt, never failing the request that was served). A later
	 * {@link #refund(int)} gives back what it costs now. Does nothing if it holds nothing.
	 * @param index the acquisition's index
	 * @param cost what the request cost, at least 0
	 * @since 0.3.0
	 */
	public void settle(int index, long cost) {
		RateLimitStore store;
		Acquisition reserved;
		synchronized (this.heldBy) {
			store = this.heldBy[index];
			reserved = this.acquisitions.get(index);
			if (store == null || cost == reserved.cost()) {
				return;
			}
			if (cost == 0) {
				this.heldBy[index] = null; // nothing held any more
			}
			else {
				this.acquisitions.set(index, new Acquisition(reserved.policy(), reserved.key(), cost));
			}
		}
		long difference = cost - reserved.cost();
		Acquisition units = new Acquisition(reserved.policy(), reserved.key(), Math.abs(difference));
		if (difference < 0) {
			this.adjustments.refund(store, List.of(units), new long[] { this.countedAt[index] });
		}
		else {
			this.adjustments.charge(store, units, this.countedAt[index]);
		}
	}

	/** Take the stores holding the acquisitions' units, each with what it holds: usually one, the store. */
	private Map<RateLimitStore, Held> heldByStore(int... indexes) {
		// The in-memory fallback holds those of policies that fell back.
		Map<RateLimitStore, Held> byStore = new LinkedHashMap<>(2);
		Map<RateLimitStore, List<Integer>> indexesByStore = new LinkedHashMap<>(2);
		for (int index : indexes) {
			RateLimitStore store = release(index);
			if (store != null) {
				indexesByStore.computeIfAbsent(store, (s) -> new ArrayList<>(indexes.length)).add(index);
			}
		}
		indexesByStore.forEach((store, held) -> {
			List<Acquisition> acquisitions = new ArrayList<>(held.size());
			long[] countedAt = new long[held.size()];
			for (int i = 0; i < held.size(); i++) {
				acquisitions.add(this.acquisitions.get(held.get(i)));
				countedAt[i] = this.countedAt[held.get(i)];
			}
			byStore.put(store, new Held(acquisitions, countedAt));
		});
		return byStore;
	}

	private record Held(List<Acquisition> acquisitions, long[] countedAt) {
	}

	/** Take the store holding one acquisition's units, so that they are given back once at most. */
	private @Nullable RateLimitStore release(int index) {
		synchronized (this.heldBy) {
			RateLimitStore store = this.heldBy[index];
			this.heldBy[index] = null;
			return store;
		}
	}

}
