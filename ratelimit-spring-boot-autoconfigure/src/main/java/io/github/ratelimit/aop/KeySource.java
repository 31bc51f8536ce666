package io.github.ratelimit.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * Where a policy's counter key comes from: the client's IP address, an argument, or a SpEL expression. Decided
 * once at start-up, so that the common cases evaluate no expression at all.
 */
sealed interface KeySource {

	/**
	 * Return the key, or {@code null} if it cannot be determined (the caller falls back to the client IP).
	 */
	@Nullable Object key(InvocationScope scope);

	/** The client's IP address: resolved by the caller. */
	record ClientIp() implements KeySource {

		@Override
		public @Nullable Object key(InvocationScope scope) {
			return null;
		}

	}

	/** A method argument, for an expression that is just {@code #parameterName}. */
	record Argument(int index) implements KeySource {

		@Override
		public @Nullable Object key(InvocationScope scope) {
			return scope.arguments()[this.index];
		}

	}

	/** Any other SpEL expression. */
	record Spel(Expression expression) implements KeySource {

		@Override
		public @Nullable Object key(InvocationScope scope) {
			return this.expression.getValue(scope.evaluationContext());
		}

	}

}
