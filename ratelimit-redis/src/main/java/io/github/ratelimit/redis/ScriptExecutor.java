package io.github.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Runs a rate limit script with EVALSHA, falling back to EVAL when Redis does not have it cached (after a restart,
 * a failover or {@code SCRIPT FLUSH}).
 */
interface ScriptExecutor extends AutoCloseable {

	/**
	 * Run the script; the future completes with the script's integer array, or exceptionally.
	 */
	CompletableFuture<List<Object>> execute(RateLimitScript script, byte[][] keys, byte[][] args);

	/**
	 * Delete the given keys, all of one hash slot; the future completes once they are gone, or exceptionally.
	 */
	CompletableFuture<?> delete(byte[][] keys);

	/**
	 * Start connecting and loading the scripts in the background, so that the first decisions do not pay for it.
	 * Failures are ignored: the first decisions then retry, within their own timeout.
	 */
	default void warmUp(Iterable<RateLimitScript> scripts) {
	}

	@Override
	void close();

	static boolean isNoScript(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			String message = cause.getMessage();
			if (message != null && message.contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

}
