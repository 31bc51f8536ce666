package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The {@code @RateLimited} method whose call an entry point of its own decided (an MCP server's tool call), on this
 * thread: the proxy's interceptor lets that one call through rather than decide it again. Any other call of the
 * method (a controller's, a local tool call) is decided by the interceptor as usual.
 *
 * @since 0.5.0
 */
public final class DecidedInvocations {

	private static final ThreadLocal<@Nullable Method> DECIDED = new ThreadLocal<>();

	private DecidedInvocations() {
	}

	/**
	 * Run what calls a method, the method's limits decided already.
	 * @param method the method the call reaches
	 * @param call what calls it, on this thread
	 * @param <T> what the call returns
	 * @return what it returned
	 */
	public static <T> T decided(Method method, Supplier<T> call) {
		Method outer = DECIDED.get();
		DECIDED.set(method);
		try {
			return call.get();
		}
		finally {
			if (outer != null) {
				DECIDED.set(outer);
			}
			else {
				DECIDED.remove();
			}
		}
	}

	/**
	 * Return whether this call of a method was decided already, and take the mark: a call the method then makes of
	 * itself is decided again.
	 * @param method the method invoked
	 * @return whether an entry point decided it
	 */
	static boolean take(Method method) {
		Method decided = DECIDED.get();
		if (decided != null && decided.equals(method)) {
			DECIDED.remove();
			return true;
		}
		return false;
	}

}
