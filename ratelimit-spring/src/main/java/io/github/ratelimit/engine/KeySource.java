package io.github.ratelimit.engine;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

/**
 * Where a policy's counter key comes from: the client's IP address, an argument, a literal, or a SpEL expression.
 * Decided once at start-up, so that the common cases evaluate no expression at all.
 */
sealed interface KeySource {

	/**
	 * Return the key, or {@code null} if it cannot be determined (the caller falls back to the client IP).
	 */
	@Nullable Object key(RequestScope scope);

	/** The client's IP address: resolved by the caller. */
	record ClientIp() implements KeySource {

		@Override
		public @Nullable Object key(RequestScope scope) {
			return null;
		}

	}

	/** A method argument, for an expression that is just {@code #parameterName}. */
	record Argument(int index) implements KeySource {

		@Override
		public @Nullable Object key(RequestScope scope) {
			return scope.arguments()[this.index];
		}

	}

	/** A literal expression ({@code 'application'}): one key for every client, an application-wide quota. */
	record Literal(@Nullable Object value) implements KeySource {

		@Override
		public @Nullable Object key(RequestScope scope) {
			return this.value;
		}

	}

	/** Any other SpEL expression. */
	record Spel(Expression expression) implements KeySource {

		@Override
		public @Nullable Object key(RequestScope scope) {
			return this.expression.getValue(scope.evaluationContext());
		}

	}

}
