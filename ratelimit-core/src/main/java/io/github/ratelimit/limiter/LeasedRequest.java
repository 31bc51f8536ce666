package io.github.ratelimit.limiter;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Decision;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.Reservation;
import org.jspecify.annotations.Nullable;

/** One request's acquisitions as they are decided. */
final class LeasedRequest {

	private final LeasingStore leasing;

	private final LeaseBlocks blocks;

	final List<Acquisition> acquisitions;

	final int size;

	/** Whether what it gives back must not make the calling thread wait. */
	final boolean nonBlocking;

	final @Nullable Decision[] decisions;

	final long[] countedAt;

	/** Per acquisition, whether this instance holds units it took for it (from a block, or asked alone). */
	final boolean[] taken;

	/** Per acquisition, the block its units came from, or {@code null}. */
	final @Nullable LeaseBlock[] from;

	LeasedRequest(LeasingStore leasing, LeaseBlocks blocks, List<Acquisition> acquisitions, boolean nonBlocking) {
		this.leasing = leasing;
		this.blocks = blocks;
		this.acquisitions = acquisitions;
		this.size = acquisitions.size();
		this.nonBlocking = nonBlocking;
		this.decisions = new Decision[this.size];
		this.countedAt = new long[this.size];
		this.taken = new boolean[this.size];
		this.from = new LeaseBlock[this.size];
	}

	synchronized void decided(int i, Decision decision, long countedAt, @Nullable LeaseBlock from, boolean taken) {
		this.decisions[i] = decision;
		this.countedAt[i] = countedAt;
		this.from[i] = from;
		this.taken[i] = taken && decision.allowed();
	}

	synchronized boolean rejected() {
		for (Decision decision : this.decisions) {
			if (decision != null && !decision.allowed()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The reservation. If rejected, what this instance took is given back (the store already gave back what its
	 * own call took), and the acquisitions not asked are reported undecided.
	 */
	synchronized Reservation settle() {
		if (rejected()) {
			giveBack();
			for (int i = 0; i < this.size; i++) {
				if (this.decisions[i] == null) {
					this.decisions[i] = OneByOne.notDecided(this.acquisitions.get(i));
				}
			}
		}
		List<Decision> decided = new ArrayList<>(this.size);
		for (Decision decision : this.decisions) {
			decided.add(Decision.class.cast(decision));
		}
		return new Reservation(decided, this.countedAt);
	}

	/**
	 * The store failed: if this instance took units for some acquisitions already, the failure is partial, those
	 * decided and kept for the caller to keep or give back; else it is the store's failure as it is.
	 */
	synchronized RuntimeException failed(List<Integer> others, RuntimeException failure) {
		@Nullable Decision[] all = new Decision[this.size];
		long[] times = this.countedAt.clone();
		boolean anyTaken = false;
		for (int i = 0; i < this.size; i++) {
			if (this.taken[i]) {
				all[i] = this.decisions[i];
				anyTaken = true;
			}
		}
		if (failure instanceof PartialStoreFailureException partial) {
			for (int j = 0; j < others.size(); j++) {
				int i = others.get(j);
				all[i] = partial.failed(j) ? null : partial.decision(j);
				times[i] = partial.countedAt(j);
				anyTaken |= !partial.failed(j);
			}
		}
		if (!anyTaken) {
			return (failure instanceof PartialStoreFailureException partial
					&& partial.getCause() instanceof RuntimeException cause) ? cause : failure;
		}
		RuntimeException cause = (failure instanceof PartialStoreFailureException
				&& failure.getCause() instanceof RuntimeException inner) ? inner : failure;
		return new PartialStoreFailureException(all, times, cause);
	}

	/** Give back, once, what this instance took: to the block it came from, else to the store. */
	private void giveBack() {
		List<Acquisition> toStore = new ArrayList<>();
		List<Long> times = new ArrayList<>();
		for (int i = 0; i < this.size; i++) {
			if (!this.taken[i]) {
				continue;
			}
			this.taken[i] = false;
			Acquisition acquisition = this.acquisitions.get(i);
			if (!this.blocks.returnToBlock(acquisition, this.countedAt[i])) {
				toStore.add(acquisition);
				times.add(this.countedAt[i]);
			}
			this.decisions[i] = OneByOne.givenBack(Decision.class.cast(this.decisions[i]), acquisition.cost());
		}
		if (!toStore.isEmpty()) {
			this.leasing.refundQuietly(toStore, times.stream().mapToLong(Long::longValue).toArray(), this.nonBlocking);
		}
	}

}
