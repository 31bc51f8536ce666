package io.github.ratelimit.engine;

import java.util.List;

/**
 * The policies of one method of one class, in declaration order, and what evaluating their keys needs.
 */
final class MethodLimits {

	final Class<?> targetClass;

	final PolicySpec[] specs;

	final String[] parameterNames;

	/** Whether one enforced policy that counts every request is all there is: decided by the fast path. */
	final boolean single;

	MethodLimits(Class<?> targetClass, List<PolicySpec> specs, String[] parameterNames) {
		this.targetClass = targetClass;
		this.specs = specs.toArray(new PolicySpec[0]);
		this.parameterNames = parameterNames;
		this.single = this.specs.length == 1 && this.specs[0].countOn() == null && !this.specs[0].isShadow()
				&& !this.specs[0].hasSettle()
				&& !this.specs[0].hasSkip() && !this.specs[0].isPlanned() && this.specs[0].penalty() == null
				&& this.specs[0].waiting() == null && !Concurrency.limits(this.specs[0]);
	}

	boolean isEmpty() {
		return this.specs.length == 0;
	}

}
