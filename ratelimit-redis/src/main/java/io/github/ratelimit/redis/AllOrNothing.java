package io.github.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.PartialStoreFailureException;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.Reservation;

/**
 * Decisions of several acquisitions together, all or nothing (on a Cluster, per hash slot, with the slots that took
 * giving back when another rejects), each also under its policy's other parameter sets in use (a rolling deploy), and
 * their give-backs and charges: blocking, or completing on the thread that receives the last answer.
 */
final class AllOrNothing {

	private final ScriptCalls calls;

	private final PolicyScripts scripts;

	private final PolicyVersions versions;

	private final long timeoutNanos;

	AllOrNothing(ScriptCalls calls, PolicyScripts scripts, PolicyVersions versions, long timeoutNanos) {
		this.calls = calls;
		this.scripts = scripts;
		this.versions = versions;
		this.timeoutNanos = timeoutNanos;
	}

	/** Decide the acquisitions, waiting for Redis until the timeout since {@code start}. */
	Reservation decide(List<Acquisition> acquisitions, long start) {
		List<PolicyVersions.View> views = views(acquisitions, start);
		List<List<RateLimitPolicy>> others = new ArrayList<>(acquisitions.size());
		for (PolicyVersions.View view : views) {
			others.add(this.versions.others(view, start + this.timeoutNanos));
		}
		return anyOthers(others) ? decideWithOthers(acquisitions, others, start) : decideTogether(acquisitions, start);
	}

	/** Decide the acquisitions, each with the other parameter sets of its policy given. */
	Reservation decideWithOthers(List<Acquisition> acquisitions, List<List<RateLimitPolicy>> others, long start) {
		WithOthers withOthers = new WithOthers(acquisitions, others);
		try {
			return withOthers.combined(decideTogether(withOthers.all, start));
		}
		catch (PartialStoreFailureException ex) {
			throw withOthers.combined(ex);
		}
	}

	/** Decide as {@link #decide} does without waiting: no thread waits, here or in the client. */
	CompletableFuture<Reservation> decideAsync(List<Acquisition> acquisitions, long start) {
		List<PolicyVersions.View> views = views(acquisitions, start);
		List<CompletableFuture<List<RateLimitPolicy>>> known = new ArrayList<>(views.size());
		for (PolicyVersions.View view : views) {
			known.add(this.versions.othersAsync(view, start + this.timeoutNanos));
		}
		return CompletableFuture.allOf(known.toArray(new CompletableFuture<?>[0])).thenCompose((ignored) -> {
			List<List<RateLimitPolicy>> others = known.stream().map(CompletableFuture::join).toList();
			if (!anyOthers(others)) {
				return decideTogetherAsync(acquisitions, start);
			}
			WithOthers withOthers = new WithOthers(acquisitions, others);
			return decideTogetherAsync(withOthers.all, start).handle((reservation, failure) -> {
				if (failure == null) {
					return withOthers.combined(reservation);
				}
				Throwable cause = ScriptCalls.unwrap(failure);
				throw (cause instanceof PartialStoreFailureException partial) ? withOthers.combined(partial)
						: new CompletionException(cause);
			});
		});
	}

	private List<PolicyVersions.View> views(List<Acquisition> acquisitions, long start) {
		List<PolicyVersions.View> views = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			PolicyVersions.View view = this.scripts.used(acquisition.policy(), start).versions;
			this.versions.refreshIfDue(view); // all under way before any is awaited
			views.add(view);
		}
		return views;
	}

	private static boolean anyOthers(List<List<RateLimitPolicy>> others) {
		for (List<RateLimitPolicy> of : others) {
			if (!of.isEmpty()) {
				return true;
			}
		}
		return false;
	}

	private Reservation decideTogether(List<Acquisition> acquisitions, long start) {
		SlotDecision decision = new SlotDecision(this.calls, acquisitions, this.calls.groupBySlot(acquisitions));
		String what = describe(acquisitions);
		for (int g = 0; g < decision.groups(); g++) {
			try {
				decision.answered(g, this.calls.await(decision.call(g), start, what));
			}
			catch (RateLimitStoreException ex) {
				decision.failed(ex);
			}
		}
		for (CompletableFuture<List<Object>> refund : decision.giveBackIfRejected()) {
			try {
				this.calls.await(refund, start, what);
			}
			catch (RateLimitStoreException ex) {
				// The units stay taken: the client is counted once more than it should, never less.
			}
		}
		return decision.reservation();
	}

	private CompletableFuture<Reservation> decideTogetherAsync(List<Acquisition> acquisitions, long start) {
		SlotDecision decision = new SlotDecision(this.calls, acquisitions, this.calls.groupBySlot(acquisitions));
		String what = describe(acquisitions);
		CompletableFuture<?>[] answered = new CompletableFuture<?>[decision.groups()];
		for (int g = 0; g < answered.length; g++) {
			int group = g;
			answered[g] = this.calls.within(decision.call(g), start, what).handle((answers, failure) -> {
				if (failure == null) {
					decision.answered(group, answers);
				}
				else {
					decision.failed(ScriptCalls.storeFailure(ScriptCalls.unwrap(failure)));
				}
				return null;
			});
		}
		return CompletableFuture.allOf(answered).thenCompose((ignored) -> {
			List<CompletableFuture<List<Object>>> refunds = decision.giveBackIfRejected();
			CompletableFuture<?>[] given = new CompletableFuture<?>[refunds.size()];
			for (int i = 0; i < given.length; i++) {
				// The units of a refund that fails stay taken: the client is counted once more, never less.
				given[i] = this.calls.within(refunds.get(i), start, what).exceptionally((failure) -> null);
			}
			return CompletableFuture.allOf(given);
		}).thenApply((ignored) -> decision.reservation());
	}

	/**
	 * Give back ({@link ScriptCalls#REFUND}) or take ({@link ScriptCalls#CHARGE}) the units, in one script call (on a
	 * Cluster, one per hash slot, sent together), from each key's state and from its state under the policy's other
	 * parameter sets that took the admission's units, waiting until the timeout.
	 * @throws RateLimitStoreException the first failure, once every call answered or timed out
	 */
	void settle(byte[] mode, List<Acquisition> acquisitions, long[] countedAtMillis) {
		long start = System.nanoTime();
		List<CompletableFuture<List<Object>>> calls = sendSettlement(mode, acquisitions, countedAtMillis);
		String what = describe(acquisitions);
		RateLimitStoreException failure = null;
		for (CompletableFuture<List<Object>> call : calls) {
			try {
				this.calls.await(call, start, what);
			}
			catch (RateLimitStoreException ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** Give the units back as {@link #settle} does, without waiting. */
	CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, long[] countedAtMillis) {
		long start = System.nanoTime();
		List<CompletableFuture<List<Object>>> calls = sendSettlement(ScriptCalls.REFUND, acquisitions,
				countedAtMillis);
		String what = describe(acquisitions);
		CompletableFuture<?>[] given = new CompletableFuture<?>[calls.size()];
		for (int i = 0; i < given.length; i++) {
			given[i] = this.calls.within(calls.get(i), start, what);
		}
		return CompletableFuture.allOf(given);
	}

	private List<CompletableFuture<List<Object>>> sendSettlement(byte[] mode, List<Acquisition> acquisitions,
			long[] countedAtMillis) {
		List<Acquisition> all = new ArrayList<>(acquisitions.size() + 1);
		List<Long> times = new ArrayList<>(acquisitions.size() + 1);
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			all.add(acquisition);
			times.add(countedAtMillis[i]);
			for (RateLimitPolicy other : this.versions.othersSince(this.scripts.own(acquisition.policy()).versions,
					countedAtMillis[i])) {
				all.add(new Acquisition(other, acquisition.key(), acquisition.cost()));
				times.add(countedAtMillis[i]);
			}
		}
		long[] at = times.stream().mapToLong(Long::longValue).toArray();
		List<CompletableFuture<List<Object>>> calls = new ArrayList<>();
		for (List<Integer> group : this.calls.groupBySlot(all)) {
			calls.add(this.calls.call(mode, all, group, at));
		}
		return calls;
	}

	private static String describe(List<Acquisition> acquisitions) {
		StringBuilder names = new StringBuilder((acquisitions.size() == 1) ? "policy " : "policies ");
		for (int i = 0; i < acquisitions.size(); i++) {
			names.append((i > 0) ? ", '" : "'").append(acquisitions.get(i).policy().name()).append('\'');
		}
		return names.toString();
	}

	/**
	 * Each acquisition decided together with the same key under its policy's other parameter sets in use: a request
	 * passes only if the state of each admits it (they share the key's hash slot).
	 */
	private static final class WithOthers {

		final List<Acquisition> all;

		/** Where each acquisition's other sets start in {@link #all}, and where the last ones end. */
		private final int[] from;

		private final int size;

		WithOthers(List<Acquisition> acquisitions, List<List<RateLimitPolicy>> others) {
			this.size = acquisitions.size();
			this.all = new ArrayList<>(acquisitions);
			this.from = new int[this.size + 1];
			for (int i = 0; i < this.size; i++) {
				this.from[i] = this.all.size();
				Acquisition acquisition = acquisitions.get(i);
				for (RateLimitPolicy other : others.get(i)) {
					this.all.add(new Acquisition(other, acquisition.key(), acquisition.cost()));
				}
			}
			this.from[this.size] = this.all.size();
		}

		Reservation combined(Reservation reservation) {
			List<Decision> decisions = new ArrayList<>(this.size);
			long[] times = new long[this.size];
			for (int i = 0; i < this.size; i++) {
				decisions.add(PolicyVersions.combined(reservation.decisions().get(i),
						reservation.decisions().subList(this.from[i], this.from[i + 1])));
				times[i] = reservation.countedAt(i);
			}
			return new Reservation(decisions, times);
		}

		/** A key and its other sets share a hash slot: they failed, or were decided, together. */
		PartialStoreFailureException combined(PartialStoreFailureException ex) {
			Decision[] decisions = new Decision[this.size];
			long[] times = new long[this.size];
			for (int i = 0; i < this.size; i++) {
				Decision own = ex.decision(i);
				if (own != null) {
					List<Decision> otherDecisions = new ArrayList<>();
					for (int j = this.from[i]; j < this.from[i + 1]; j++) {
						otherDecisions.add(Objects.requireNonNull(ex.decision(j)));
					}
					decisions[i] = PolicyVersions.combined(own, otherDecisions);
					times[i] = ex.countedAt(i);
				}
			}
			return new PartialStoreFailureException(decisions, times,
					(ex.getCause() instanceof RuntimeException cause) ? cause : ex);
		}

	}

}
