package io.github.ratelimit.aop;

import java.util.List;

/**
 * The policies of one method of one class, in declaration order, and what evaluating their keys needs.
 */
final class MethodRateLimits {

	final Class<?> targetClass;

	final MethodPolicy[] policies;

	final String[] parameterNames;

	/** Whether one enforced policy that counts every request is all there is: decided by the fast path. */
	final boolean single;

	MethodRateLimits(Class<?> targetClass, List<MethodPolicy> policies, String[] parameterNames) {
		this.targetClass = targetClass;
		this.policies = policies.toArray(new MethodPolicy[0]);
		this.parameterNames = parameterNames;
		this.single = this.policies.length == 1 && this.policies[0].countOn() == null && !this.policies[0].shadow()
				&& !this.policies[0].hasSkip() && !this.policies[0].isPlanned();
	}

	boolean isEmpty() {
		return this.policies.length == 0;
	}

}
