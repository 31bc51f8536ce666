package io.github.ratelimit.engine;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Whether an expression calls the application's code: a bean ({@code @apiKeys.lookup(...)}), a static method
 * ({@code T(Accounts).plan(...)}) or a constructor. Such code may query a database or a remote service, so a
 * non-blocking web stack runs it off its event loop ({@link io.github.ratelimit.web.RateLimitRequest#applicationCodeExecutor}).
 * An expression that only reads the request, the principal and the method's arguments ({@code #userId},
 * {@code #request.headers.getFirst('X-API-Key')}) does not.
 */
final class ApplicationCode {

	private ApplicationCode() {
	}

	static boolean isCalledBy(@Nullable Expression expression) {
		return expression instanceof SpelExpression spel && calls(spel.getAST());
	}

	private static boolean calls(SpelNode node) {
		if (node instanceof BeanReference || node instanceof TypeReference || node instanceof ConstructorReference) {
			return true;
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			if (calls(node.getChild(i))) {
				return true;
			}
		}
		return false;
	}

}
