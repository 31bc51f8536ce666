package io.github.ratelimit.store;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.Decision;

/**
 * Several acquisitions decided one after another, all or nothing by giving back what was taken when one is
 * rejected: how a store that cannot decide several keys in one atomic step implements
 * {@link RateLimitStore#tryAcquireAll}.
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
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		long[] times = new long[acquisitions.size()];
		boolean allowed = true;
		for (int i = 0; i < acquisitions.size(); i++) {
			times[i] = time.currentTimeMillis();
			try {
				decisions.add(decider.decide(acquisitions.get(i), times[i]));
			}
			catch (RuntimeException ex) {
				refundAdmitted(acquisitions, decisions, times, store);
				throw ex;
			}
			allowed &= decisions.get(i).allowed();
		}
		if (!allowed) {
			refundAdmitted(acquisitions, decisions, times, store);
			for (int i = 0; i < decisions.size(); i++) {
				decisions.set(i, givenBack(decisions.get(i), acquisitions.get(i).cost()));
			}
		}
		return new Reservation(decisions, times);
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
				decision.resetAfterMillis(), 0, decision.origin());
	}

	/**
	 * Give back what the admitted ones took. A refund that fails leaves those units taken (the client is counted
	 * once more than it should, never less) and does not turn the rejection into a store failure.
	 */
	private static void refundAdmitted(List<Acquisition> acquisitions, List<Decision> decisions, long[] times,
			RateLimitStore store) {
		for (int i = 0; i < decisions.size(); i++) {
			if (decisions.get(i).allowed()) {
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
