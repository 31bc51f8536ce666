package io.github.ratelimit.store;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Decision;
import org.jspecify.annotations.Nullable;

/**
 * Several acquisitions decided one after another, all or nothing by giving back what was taken when one is
 * rejected: how a store that cannot decide several keys in one atomic step implements
 * {@link RateLimitStore#tryAcquireAll}. A key whose part of the store fails does not stop the others from being
 * decided: when none rejects, a {@link PartialStoreFailureException} names those that failed, and the admitted ones
 * keep their units for the caller to settle.
 *
 * @since 0.2.0
 */
public final class OneByOne {

	private static final Logger logger = System.getLogger(OneByOne.class.getName());

	private OneByOne() {
	}

	/**
	 * Decide every acquisition, then give back the units of the admitted ones if any was rejected.
	 * @param acquisitions the acquisitions
	 * @param time the time each acquisition is counted at, asked just before deciding it
	 * @param decider decides one acquisition at the given time
	 * @param store the store that gives units back
	 * @return the reservation
	 */
	public static Reservation tryAcquireAll(List<Acquisition> acquisitions, Clock time, Decider decider,
			RateLimitStore store) {
		int size = acquisitions.size();
		Decision[] decisions = new Decision[size];
		long[] times = new long[size];
		RuntimeException failure = null;
		boolean allowed = true;
		// Every one is decided, so that every limit that rejects the request is known.
		for (int i = 0; i < size; i++) {
			times[i] = time.currentTimeMillis();
			try {
				decisions[i] = decider.decide(acquisitions.get(i), times[i]);
				allowed &= decisions[i].allowed();
			}
			catch (IllegalArgumentException ex) {
				refundAdmitted(acquisitions, decisions, times, store);
				throw ex; // a programming error, not a part that failed
			}
			catch (RuntimeException ex) {
				// This key's part failed: decide the others, whose parts may be healthy.
				failure = (failure != null) ? failure : ex;
			}
		}
		if (!allowed) {
			refundAdmitted(acquisitions, decisions, times, store);
			return rejected(acquisitions, decisions, times);
		}
		return admitted(decisions, times, failure);
	}

	/**
	 * Decide every acquisition as {@link #tryAcquireAll} does, without waiting for the store: all at once, then,
	 * once every one is decided, the units of the admitted ones given back if any was rejected.
	 * @param acquisitions the acquisitions
	 * @param time the time each acquisition is counted at, asked just before deciding it
	 * @param decider decides one acquisition at the given time, without waiting
	 * @param store the store that gives units back ({@link RateLimitStore#refundAllAsync})
	 * @return a stage that completes with the reservation, or exceptionally with what {@code tryAcquireAll} would
	 * throw
	 * @since 0.2.0
	 */
	public static CompletionStage<Reservation> tryAcquireAllAsync(List<Acquisition> acquisitions, Clock time,
			AsyncDecider decider, RateLimitStore store) {
		int size = acquisitions.size();
		Decision[] decisions = new Decision[size];
		long[] times = new long[size];
		Throwable[] failures = new Throwable[size];
		CompletableFuture<?>[] decided = new CompletableFuture<?>[size];
		for (int i = 0; i < size; i++) {
			int index = i;
			times[i] = time.currentTimeMillis();
			CompletionStage<Decision> stage;
			try {
				stage = decider.decide(acquisitions.get(i), times[i]);
			}
			catch (RuntimeException ex) {
				stage = CompletableFuture.failedFuture(ex);
			}
			decided[i] = stage.toCompletableFuture().handle((decision, failure) -> {
				if (failure != null) {
					failures[index] = unwrap(failure);
				}
				else {
					decisions[index] = decision;
				}
				return null;
			});
		}
		return CompletableFuture.allOf(decided).thenCompose((ignored) -> {
			boolean allowed = true;
			RuntimeException failure = null;
			IllegalArgumentException misuse = null;
			for (int i = 0; i < size; i++) {
				if (failures[i] instanceof IllegalArgumentException ex) {
					misuse = (misuse != null) ? misuse : ex;
				}
				else if (failures[i] != null) {
					failure = (failure != null) ? failure : asRuntime(failures[i]);
				}
				else {
					allowed &= decisions[i].allowed();
				}
			}
			if (misuse != null || !allowed) {
				IllegalArgumentException thrown = misuse;
				return refundAdmittedAsync(acquisitions, decisions, times, store).thenApply((given) -> {
					if (thrown != null) {
						throw thrown; // a programming error, not a part that failed
					}
					return rejected(acquisitions, decisions, times);
				});
			}
			try {
				return CompletableFuture.completedFuture(admitted(decisions, times, failure));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		});
	}

	/** The reservation of a rejected request, whose admitted acquisitions were given back. */
	private static Reservation rejected(List<Acquisition> acquisitions, @Nullable Decision[] decisions,
			long[] times) {
		Decision[] reported = new Decision[decisions.length];
		for (int i = 0; i < decisions.length; i++) {
			Decision decision = decisions[i];
			// Not decided where a part failed: whatever it is, the request is rejected.
			reported[i] = (decision != null) ? givenBack(decision, acquisitions.get(i).cost())
					: notDecided(acquisitions.get(i));
		}
		return new Reservation(Arrays.asList(reported), times);
	}

	/** The reservation of a request no acquisition rejected, or the failure of the parts that could not decide. */
	private static Reservation admitted(@Nullable Decision[] decisions, long[] times,
			@Nullable RuntimeException failure) {
		if (failure != null) {
			boolean anyDecided = Arrays.stream(decisions).anyMatch(Objects::nonNull);
			if (!anyDecided) {
				throw failure;
			}
			throw new PartialStoreFailureException(decisions, times, failure);
		}
		return new Reservation(Arrays.asList(decisions), times);
	}

	/** Give back what the admitted ones took, as {@link #refundAdmitted} does, without waiting; never fails. */
	private static CompletionStage<@Nullable Void> refundAdmittedAsync(List<Acquisition> acquisitions,
			@Nullable Decision[] decisions, long[] times, RateLimitStore store) {
		List<Acquisition> admitted = new ArrayList<>();
		List<Long> countedAt = new ArrayList<>();
		for (int i = 0; i < decisions.length; i++) {
			Decision decision = decisions[i];
			if (decision != null && decision.allowed()) {
				admitted.add(acquisitions.get(i));
				countedAt.add(times[i]);
			}
		}
		if (admitted.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		CompletionStage<Void> given;
		try {
			given = store.refundAllAsync(admitted, countedAt.stream().mapToLong(Long::longValue).toArray());
		}
		catch (RuntimeException ex) {
			given = CompletableFuture.failedFuture(ex);
		}
		return given.handle((ignored, ex) -> {
			if (ex != null) {
				logger.log(Level.DEBUG, () -> "Could not give back units after a rejection: " + unwrap(ex).getMessage());
			}
			return null;
		});
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static RuntimeException asRuntime(Throwable failure) {
		return (failure instanceof RuntimeException ex) ? ex
				: new RateLimitStoreException("The store failed: " + failure, failure);
	}

	/**
	 * Return what to report for an acquisition not decided because the request was rejected by another: its capacity,
	 * marked as not known.
	 * @param acquisition the acquisition
	 * @return the decision to report
	 */
	public static Decision notDecided(Acquisition acquisition) {
		long capacity = acquisition.policy().capacity();
		return new Decision(true, capacity, capacity, 0, 0, Decision.Origin.FAIL_OPEN);
	}

	/**
	 * Return the decision an admitted acquisition reports once its units were given back: what its policy alone
	 * would have left. Rejections are returned as they are.
	 * @param decision the decision
	 * @param cost the acquisition's cost
	 * @return the decision to report
	 */
	public static Decision givenBack(Decision decision, long cost) {
		if (!decision.allowed()) {
			return decision;
		}
		return new Decision(true, decision.limit(), Math.min(decision.limit(), decision.remaining() + cost),
				decision.resetAfterMillis(), 0, decision.nextUnitAfterMillis(), decision.origin());
	}

	/**
	 * Give back what the admitted ones took. A refund that fails leaves those units taken (the client is counted
	 * once more than it should, never less) and does not turn the rejection into a store failure.
	 */
	private static void refundAdmitted(List<Acquisition> acquisitions, @Nullable Decision[] decisions, long[] times,
			RateLimitStore store) {
		for (int i = 0; i < decisions.length; i++) {
			Decision decision = decisions[i];
			if (decision != null && decision.allowed()) {
				try {
					store.refund(acquisitions.get(i), times[i]);
				}
				catch (RuntimeException ex) {
					String policy = acquisitions.get(i).policy().name();
					logger.log(Level.DEBUG, () -> "Could not give back units of policy '" + policy
							+ "' after a rejection: " + ex.getMessage());
				}
			}
		}
	}

	/** The time acquisitions are counted at. */
	@FunctionalInterface
	public interface Clock {

		/**
		 * Return the current time.
		 * @return milliseconds since the epoch
		 */
		long currentTimeMillis();

	}

	/** Decides one acquisition at a given time, without waiting for the store. */
	@FunctionalInterface
	public interface AsyncDecider {

		/**
		 * Decide.
		 * @param acquisition the acquisition
		 * @param now the time to decide at
		 * @return a stage that completes with the decision
		 */
		CompletionStage<Decision> decide(Acquisition acquisition, long now);

	}

	/** Decides one acquisition at a given time. */
	@FunctionalInterface
	public interface Decider {

		/**
		 * Decide.
		 * @param acquisition the acquisition
		 * @param now the time to decide at
		 * @return the decision
		 */
		Decision decide(Acquisition acquisition, long now);

	}

}
