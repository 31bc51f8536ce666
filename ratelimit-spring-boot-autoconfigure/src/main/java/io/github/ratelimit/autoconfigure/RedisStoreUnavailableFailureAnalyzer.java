package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains {@code ratelimit.store=redis} without Redis.
 */
class RedisStoreUnavailableFailureAnalyzer
		extends AbstractFailureAnalyzer<RateLimitStoreConfigurations.RedisStoreUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure,
			RateLimitStoreConfigurations.RedisStoreUnavailableException cause) {
		return new FailureAnalysis(cause.getMessage() + ".",
				"Add spring-boot-starter-data-redis (and ratelimit-redis, which the starter brings) and configure "
						+ "spring.data.redis.*, or set ratelimit.store to "
						+ "'memory' (or 'auto').",
				cause);
	}

}
