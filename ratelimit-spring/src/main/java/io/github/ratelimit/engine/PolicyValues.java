package io.github.ratelimit.engine;

import java.lang.reflect.Array;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.MergedAnnotation;

/**
 * The values one source gives a policy's attributes, by attribute name as the properties spell it ({@code limit},
 * {@code window}, {@code failure-mode}, {@code count-on}, ...): an annotation, {@code ratelimit.policies.<name>}, a
 * filter, a plan. Attributes a source leaves unset are absent, so that sources stack: a policy's spec takes each
 * attribute from the first source that sets it ({@link PolicySpec}). What the values mean and which are valid is
 * decided in one place, when the spec is built.
 *
 * @param source where the values come from, for messages and the endpoint: the annotation ({@value #ANNOTATION}) or
 * the property prefix, such as {@code ratelimit.policies.orders}
 * @param values by attribute, the values set (text, numbers, durations, enums, lists)
 * @since 0.2.0
 */
public record PolicyValues(String source, Map<String, Object> values) {

	/** The source of an annotation's values. */
	public static final String ANNOTATION = "annotation";

	/** The source of a change at run time (the actuator endpoint's write operation). */
	public static final String RUNTIME = "runtime";

	/** A source that sets nothing. */
	public static final PolicyValues NONE = new PolicyValues("none", Map.of());

	/**
	 * Create the values of a source, leaving out those that are not set.
	 * @param source where the values come from
	 * @param values by attribute name (kebab-case or camelCase), the values; {@code null}, empty text and empty lists
	 * are not set
	 */
	public PolicyValues(String source, Map<String, Object> values) {
		this.source = source;
		Map<String, Object> set = new LinkedHashMap<>();
		values.forEach((name, value) -> {
			if (isSet(value)) {
				set.put(kebab(name), value);
			}
		});
		this.values = Collections.unmodifiableMap(set);
	}

	/**
	 * Return the values an annotation sets: every attribute but the name, those left at their default (so that the
	 * endpoint says {@code default} for them, not {@code annotation}), at {@link RateLimited#UNSET} or empty excepted.
	 * @param annotation the annotation
	 * @return the values
	 */
	public static PolicyValues of(RateLimited annotation) {
		MergedAnnotation<RateLimited> merged = MergedAnnotation.from(annotation);
		Map<String, Object> values = new LinkedHashMap<>(merged.asMap());
		values.remove("name");
		values.keySet().removeIf(merged::hasDefaultValue);
		values.values().removeIf((value) -> value instanceof Long number && number == RateLimited.UNSET);
		return new PolicyValues(ANNOTATION, values);
	}

	/**
	 * Return the value of an attribute, if this source sets it.
	 * @param attribute the attribute, kebab-case
	 * @return the value, or {@code null}
	 */
	public @Nullable Object get(String attribute) {
		return this.values.get(attribute);
	}

	/**
	 * Return the property (or the annotation) that set an attribute: what the endpoint shows as its source.
	 * @param attribute the attribute, kebab-case
	 * @return the source of the attribute
	 */
	public String sourceOf(String attribute) {
		return (ANNOTATION.equals(this.source) || RUNTIME.equals(this.source)) ? this.source
				: this.source + "." + attribute;
	}

	private static boolean isSet(@Nullable Object value) {
		if (value == null) {
			return false;
		}
		if (value instanceof CharSequence text) {
			return !text.toString().isBlank();
		}
		if (value instanceof Collection<?> collection) {
			return !collection.isEmpty();
		}
		return !value.getClass().isArray() || Array.getLength(value) > 0;
	}

	private static String kebab(String name) {
		StringBuilder kebab = new StringBuilder(name.length() + 4);
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (Character.isUpperCase(c)) {
				kebab.append('-').append(Character.toLowerCase(c));
			}
			else {
				kebab.append(c);
			}
		}
		return kebab.toString().toLowerCase(Locale.ROOT);
	}

}
