package io.github.ratelimit.store;

import java.util.Arrays;

import io.github.ratelimit.Decision;
import org.jspecify.annotations.Nullable;

/**
 * Thrown by {@link RateLimitStore#tryAcquireAll} when some parts of a store (the nodes of a cluster, the partitions
 * of a table) decided and others could not, and none rejected: the acquisitions decided there were admitted and
 * hold their units, so that the caller can decide the failed ones by their policies' failure modes and give back
 * what the others hold if the request is rejected after all.
 *
 * @since 0.2.0
 */
public class PartialStoreFailureException extends RateLimitStoreException {

	private final @Nullable Decision[] decisions;

	private final long[] countedAt;

	/**
	 * Create a new exception.
	 * @param decisions per acquisition, its admission, or {@code null} where its part failed
	 * @param countedAt per acquisition, the time an admitted one was counted at
	 * @param cause the failure of the first part that failed
	 */
	public PartialStoreFailureException(@Nullable Decision[] decisions, long[] countedAt, RuntimeException cause) {
		super(String.valueOf(cause.getMessage()), cause);
		this.decisions = decisions.clone();
		this.countedAt = countedAt.clone();
	}

	/**
	 * Return whether the acquisition's part failed, so that nothing was decided for it.
	 * @param index the acquisition's index
	 * @return whether it failed
	 */
	public boolean failed(int index) {
		return this.decisions[index] == null;
	}

	/**
	 * Return the admission of an acquisition whose part decided.
	 * @param index the acquisition's index
	 * @return the decision, or {@code null} if its part failed
	 */
	public @Nullable Decision decision(int index) {
		return this.decisions[index];
	}

	/**
	 * Return the time an admitted acquisition was counted at.
	 * @param index the acquisition's index
	 * @return milliseconds since the epoch
	 */
	public long countedAt(int index) {
		return this.countedAt[index];
	}

	@Override
	public String toString() {
		return super.toString() + " (decided: " + Arrays.toString(this.decisions) + ")";
	}

}
