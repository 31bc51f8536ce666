package io.github.ratelimit.aop;

import java.util.List;

/**
 * The policies of one method of one class, in declaration order, and what evaluating their keys needs.
 */
final class MethodRateLimits {

	final Class<?> targetClass;

	final MethodPolicy[] policies;

	final String[] parameterNames;

	MethodRateLimits(Class<?> targetClass, List<MethodPolicy> policies, String[] parameterNames) {
		this.targetClass = targetClass;
		this.policies = policies.toArray(new MethodPolicy[0]);
		this.parameterNames = parameterNames;
	}

	boolean isEmpty() {
		return this.policies.length == 0;
	}

}
