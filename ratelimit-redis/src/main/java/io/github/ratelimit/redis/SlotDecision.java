package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.OneByOne;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;
import org.jspecify.annotations.Nullable;

/**
 * One all-or-nothing decision of several acquisitions: one script call per hash slot (one in all off a Cluster),
 * all sent at once; when a slot rejects, the slots that admitted give back what they took. The answers may arrive
 * on different threads (a Cluster's nodes each have their connection), in any order; the caller waits for them or
 * not, and asks for the {@link #reservation()} once all are in and the refunds done.
 */
final class SlotDecision {

	/** Sends script calls of the acquisitions: to take, a call per group, or to give back at the given times. */
	interface Calls {

		List<CompletableFuture<List<Object>>> take(List<Acquisition> acquisitions, List<List<Integer>> groups);

		CompletableFuture<List<Object>> call(byte[] mode, List<Acquisition> acquisitions, List<Integer> group,
				long @Nullable [] times);

	}

	private final Calls calls;

	private final List<Acquisition> acquisitions;

	private final List<List<Integer>> groups;

	private final List<CompletableFuture<List<Object>>> sent;

	private final Decision[] decisions;

	private final long[] times;

	private final boolean[] admitted;

	private boolean allowed = true;

	private @Nullable RuntimeException failure;

	/** Send the script calls, one per group of acquisitions of one hash slot. */
	SlotDecision(Calls calls, List<Acquisition> acquisitions, List<List<Integer>> groups) {
		this.calls = calls;
		this.acquisitions = acquisitions;
		this.groups = groups;
		this.decisions = new Decision[acquisitions.size()];
		this.times = new long[acquisitions.size()];
		this.admitted = new boolean[groups.size()];
		this.sent = calls.take(acquisitions, groups);
	}

	int groups() {
		return this.groups.size();
	}

	CompletableFuture<List<Object>> call(int group) {
		return this.sent.get(group);
	}

	/** Record one slot's script answer. */
	synchronized void answered(int g, List<Object> answers) {
		List<Integer> group = this.groups.get(g);
		if (answers.size() < 6 * group.size()) {
			failed(new RateLimitStoreException("unexpected reply from the rate limit script: " + answers));
			return;
		}
		this.admitted[g] = true;
		for (int j = 0; j < group.size(); j++) {
			int i = group.get(j);
			long capacity = this.acquisitions.get(i).policy().capacity();
			int offset = 6 * j;
			long remaining = Math.max(0, Math.min(capacity, number(answers, offset + 1)));
			this.decisions[i] = new Decision(number(answers, offset) == 1, capacity, remaining,
					number(answers, offset + 2), number(answers, offset + 3), number(answers, offset + 4),
					Decision.Origin.STORE);
			this.times[i] = number(answers, offset + 5);
			CalendarWindow calendar = this.acquisitions.get(i).policy().calendar();
			if (calendar != null) {
				// Counted on the calendar's window time: back to milliseconds from when it was counted.
				long windowTime = this.times[i];
				this.times[i] = calendar.epochMillis(windowTime);
				this.decisions[i] = calendar.toEpochTime(this.decisions[i], windowTime, this.times[i]);
			}
			this.admitted[g] &= this.decisions[i].allowed();
			this.allowed &= this.decisions[i].allowed();
		}
	}

	/** Record that one slot could not decide. */
	synchronized void failed(RuntimeException failure) {
		if (this.failure == null) {
			this.failure = failure;
		}
	}

	/**
	 * Once every slot answered or failed: when one rejected, send the give-backs of the slots that admitted (one
	 * that rejected took nothing). The units of a give-back that fails stay taken: the client is counted once more
	 * than it should, never less.
	 * @return the give-back calls sent, none if no slot rejected
	 */
	synchronized List<CompletableFuture<List<Object>>> giveBackIfRejected() {
		if (this.allowed) {
			return List.of();
		}
		List<CompletableFuture<List<Object>>> refunds = new ArrayList<>();
		for (int g = 0; g < this.groups.size(); g++) {
			if (this.admitted[g]) {
				refunds.add(this.calls.call(ScriptCalls.REFUND, this.acquisitions, this.groups.get(g), this.times));
			}
		}
		return refunds;
	}

	/**
	 * Return the decisions, once every slot answered or failed and the give-backs are done.
	 * @throws PartialStoreFailureException if some slots failed and none rejected, but some admitted: the caller
	 * decides the failed slots' policies by their failure modes, and keeps or gives back what the others hold
	 * @throws RateLimitStoreException if every slot failed
	 */
	synchronized Reservation reservation() {
		RuntimeException failure = this.failure;
		if (failure != null && this.allowed) {
			for (boolean slotAdmitted : this.admitted) {
				if (slotAdmitted) {
					throw new PartialStoreFailureException(this.decisions, this.times, failure);
				}
			}
			throw failure;
		}
		if (!this.allowed) {
			// A slot rejected: the request is rejected whatever the others did. Those that failed are reported as
			// not knowing (their failure mode's answer would not change the outcome).
			for (int g = 0; g < this.groups.size(); g++) {
				for (int i : this.groups.get(g)) {
					if (this.decisions[i] == null) {
						RateLimitPolicy policy = this.acquisitions.get(i).policy();
						this.decisions[i] = new Decision(true, policy.capacity(), policy.capacity(), 0, 0,
								Decision.Origin.FAIL_OPEN);
					}
					else if (this.admitted[g]) {
						// A slot that rejected gave back inside its script; those given back here report it now.
						this.decisions[i] = OneByOne.givenBack(this.decisions[i], this.acquisitions.get(i).cost());
					}
				}
			}
		}
		return new Reservation(Arrays.asList(this.decisions), this.times);
	}

	private static long number(List<Object> answers, int index) {
		return ((Number) answers.get(index)).longValue();
	}

}
