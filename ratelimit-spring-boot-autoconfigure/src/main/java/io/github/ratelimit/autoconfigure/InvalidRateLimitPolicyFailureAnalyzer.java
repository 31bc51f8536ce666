package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.engine.InvalidRateLimitPolicyException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains an invalid {@code @RateLimited} policy at start-up.
 */
class InvalidRateLimitPolicyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRateLimitPolicyException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidRateLimitPolicyException cause) {
		String name = cause.getPolicyName();
		String property = "ratelimit.policies." + (name.contains(".") ? "[" + name + "]" : name);
		return new FailureAnalysis(cause.getMessage(),
				"Fix the @RateLimited attribute, or set the value under '" + property + "' in your configuration.",
				cause);
	}

}
