package io.github.ratelimit.store;

import java.util.List;

import io.github.ratelimit.Decision;

/**
 * What a store answered to several acquisitions decided together: one decision each, and for each admitted one the
 * time the store counted it at, which {@link RateLimitStore#refund} needs to give the units back to the right window.
 * Either every decision is allowed and every acquisition took its units, or at least one is rejected and none took
 * anything; the allowed ones then tell what their policy alone would have left.
 *
 * @param decisions one decision per acquisition, in order
 * @param countedAt per acquisition, the store's time in milliseconds since the epoch at which it was counted
 * @since 0.2.0
 */
public record Reservation(List<Decision> decisions, long[] countedAt) {

	/**
	 * Copy and check the values.
	 * @throws IllegalArgumentException if there is not one time per decision
	 */
	public Reservation {
		decisions = List.copyOf(decisions);
		countedAt = countedAt.clone();
		if (countedAt.length != decisions.size()) {
			throw new IllegalArgumentException(
					"one time per decision is needed: " + decisions.size() + " decisions, " + countedAt.length + " times");
		}
	}

	/**
	 * Return whether every acquisition was allowed (and took its units).
	 * @return whether the request may pass
	 */
	public boolean allowed() {
		for (Decision decision : this.decisions) {
			if (!decision.allowed()) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return the time the store counted one acquisition at.
	 * @param index the acquisition's index
	 * @return the time in milliseconds since the epoch
	 */
	public long countedAt(int index) {
		return this.countedAt[index];
	}

	@Override
	public long[] countedAt() {
		return this.countedAt.clone();
	}

}
