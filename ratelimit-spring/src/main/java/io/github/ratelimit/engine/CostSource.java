package io.github.ratelimit.engine;

import io.github.ratelimit.web.InvalidRateLimitCostException;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * How many units a request takes: a constant, or a SpEL expression evaluated per request.
 */
sealed interface CostSource {

	/**
	 * Return the cost, at least 1.
	 * @throws InvalidRateLimitCostException if the expression does not yield a whole number of at least 1
	 * @throws ExpressionFailure if the expression throws
	 */
	long cost(RequestScope scope, String policyName);

	/**
	 * A cost expression that threw (a bean it calls failed, say) rather than yielding a value: a failure of the
	 * decision, which the policy's failure mode answers, not the client's mistake.
	 */
	final class ExpressionFailure extends RuntimeException {

		ExpressionFailure(RuntimeException cause) {
			super(cause.getMessage(), cause);
		}

	}

	/** A cost known at start-up. */
	record Constant(long cost) implements CostSource {

		@Override
		public long cost(RequestScope scope, String policyName) {
			return this.cost;
		}

	}

	/** A SpEL expression. */
	record Spel(Expression expression) implements CostSource {

		@Override
		public long cost(RequestScope scope, String policyName) {
			Object value;
			try {
				value = this.expression.getValue(scope.evaluationContext());
			}
			catch (RuntimeException ex) {
				throw new ExpressionFailure(ex);
			}
			long cost = toLong(value, policyName);
			if (cost < 1) {
				throw new InvalidRateLimitCostException(policyName, "the cost must be at least 1 but was " + cost);
			}
			return cost;
		}

		private static long toLong(@Nullable Object value, String policyName) {
			if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
				return ((Number) value).longValue();
			}
			if (value instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue())
					&& Math.abs(number.doubleValue()) < 1e15) {
				return number.longValue();
			}
			if (value instanceof CharSequence text) {
				try {
					return Long.parseLong(text.toString().trim());
				}
				catch (NumberFormatException ex) {
					// Reported below without echoing the value: it comes from the client.
				}
			}
			throw new InvalidRateLimitCostException(policyName,
					"the cost must be a whole number" + ((value == null) ? " but was null" : ""));
		}

	}

}
