package io.github.ratelimit.limiter;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;

import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;

/**
 * What an admission gives back or takes on after its decision: the units of a rejected request's other limits and of
 * requests that count by outcome given back, the extra units of a cost settled after the response charged. A store
 * that cannot be reached keeps what it has; the client is never counted less for it without a word.
 */
final class Adjustments {

	private final RateLimitListener listener;

	private final TimeSource clock;

	private final ThrottledLogger failureLogger;

	private final ThrottledLogger chargeLogger;

	Adjustments(RateLimitListener listener, TimeSource clock, ThrottledLogger failureLogger,
			ThrottledLogger chargeLogger) {
		this.listener = listener;
		this.clock = clock;
		this.failureLogger = failureLogger;
		this.chargeLogger = chargeLogger;
	}

	/** Give back what admitted acquisitions hold, in one call; a store that cannot be reached keeps it. */
	void refund(RateLimitStore holder, List<Acquisition> acquisitions, long[] countedAt) {
		try {
			if (acquisitions.size() == 1) {
				holder.refund(acquisitions.get(0), countedAt[0]);
			}
			else {
				holder.refundAll(acquisitions, countedAt);
			}
		}
		catch (RuntimeException ex) {
			logRefundFailure(acquisitions, ex);
		}
	}

	/**
	 * Take the extra units of an admission whose cost turned out higher. A failed charge is tried once more (a charge
	 * that landed although its answer was lost is then taken twice: too much rather than nothing); one that fails
	 * again leaves the key with what it reserved, and is told to the listener and logged at WARN.
	 */
	void charge(RateLimitStore holder, Acquisition extra, long countedAt) {
		RuntimeException failure;
		try {
			holder.charge(extra, countedAt);
			return;
		}
		catch (UnsupportedOperationException ex) {
			failure = ex;
		}
		catch (RuntimeException ex) {
			try {
				holder.charge(extra, countedAt);
				return;
			}
			catch (RuntimeException again) {
				failure = again;
			}
		}
		this.listener.onChargeLost(extra.policy(), extra.cost(), failure);
		String message = failure.getMessage();
		this.chargeLogger.log(Level.WARNING, this.clock.currentTimeMillis(),
				(skipped) -> "Rate limit store could not charge " + extra.cost() + " units of policy '"
						+ extra.policy().name() + "' settled after the response (" + message
						+ "); the client is counted for its reservation only"
						+ ((skipped > 0) ? " (" + skipped + " more lost charges since the last message)" : ""),
				null);
	}

	/** Give back what admitted acquisitions hold, in one call, without waiting for it; never completes exceptionally. */
	CompletionStage<Void> refundAsync(RateLimitStore holder, List<Acquisition> acquisitions, long[] countedAt) {
		CompletionStage<Void> given;
		try {
			given = holder.refundAllAsync(acquisitions, countedAt);
		}
		catch (RuntimeException ex) {
			given = CompletableFuture.failedFuture(ex);
		}
		return given.handle((ignored, failure) -> {
			if (failure != null) {
				logRefundFailure(acquisitions,
						(failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
								: failure);
			}
			return null;
		});
	}

	private void logRefundFailure(List<Acquisition> acquisitions, Throwable failure) {
		long now = this.clock.currentTimeMillis();
		String policies = acquisitions.stream().map((acquisition) -> "'" + acquisition.policy().name() + "'")
			.distinct().collect(Collectors.joining(", "));
		this.failureLogger.log(Level.WARNING, now, (skipped) -> "Rate limit store could not give back units of "
				+ "policy " + policies + " (" + failure.getMessage() + "); the client stays counted"
				+ ((skipped > 0) ? " (" + skipped + " more failures since the last message)" : ""), null);
	}

}
