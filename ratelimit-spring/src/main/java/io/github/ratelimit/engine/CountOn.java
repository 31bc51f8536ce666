package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Which outcomes of a method count for a policy: HTTP status codes ({@code 401}) and classes ({@code 4xx}).
 */
final class CountOn {

	/** Per status class 1 to 5, whether the whole class counts. */
	private final boolean[] classes = new boolean[6];

	private final int[] codes;

	private final String text;

	private CountOn(List<String> patterns) {
		int[] codes = new int[patterns.size()];
		int count = 0;
		for (String pattern : patterns) {
			String value = pattern.trim().toLowerCase(Locale.ROOT);
			if (value.matches("[1-5]xx")) {
				this.classes[value.charAt(0) - '0'] = true;
			}
			else if (value.matches("[1-5]\\d\\d")) {
				codes[count++] = Integer.parseInt(value);
			}
			else {
				throw new IllegalArgumentException("'count-on' must list HTTP status codes (401) or classes (4xx) but "
						+ "has '" + pattern + "'");
			}
		}
		this.codes = java.util.Arrays.copyOf(codes, count);
		this.text = String.join(", ", patterns);
	}

	/**
	 * Return the outcomes that count, or {@code null} if every admitted request counts.
	 * @throws IllegalArgumentException for a value that is neither a status code nor a class
	 */
	static @Nullable CountOn of(List<String> patterns) {
		return patterns.isEmpty() ? null : new CountOn(patterns);
	}

	boolean counts(int status) {
		if (status >= 100 && status < 600 && this.classes[status / 100]) {
			return true;
		}
		for (int code : this.codes) {
			if (code == status) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Return the status of an invocation's outcome, as the response will have it: a returned
	 * {@code ResponseEntity}'s, a thrown exception's ({@code ErrorResponse}, {@code @ResponseStatus}, else 500), or
	 * the method's {@code @ResponseStatus}, or 200.
	 */
	static int statusOf(Method method, @Nullable Object result, @Nullable Throwable failure) {
		if (failure != null) {
			if (failure instanceof ErrorResponse error) {
				return error.getStatusCode().value();
			}
			ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(failure.getClass(), ResponseStatus.class);
			return (status != null) ? status.code().value() : 500;
		}
		if (result instanceof ResponseEntity<?> entity) {
			return entity.getStatusCode().value();
		}
		ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(method, ResponseStatus.class);
		return (status != null) ? status.code().value() : 200;
	}

	@Override
	public String toString() {
		return this.text;
	}

}
