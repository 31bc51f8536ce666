package io.github.ratelimit.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A policy's sources, in order of precedence (the first that sets an attribute wins), read attribute by attribute:
 * each value converted to the attribute's type, and where it came from.
 */
final class PolicySources {

	private final List<PolicyValues> sources;

	private final String name;

	private final String where;

	PolicySources(List<PolicyValues> sources, String name, String where) {
		this.sources = sources;
		this.name = name;
		this.where = where;
	}

	/** The first source that sets the attribute, or {@code null}. */
	@Nullable PolicyValues sourceSetting(String attribute) {
		for (PolicyValues source : this.sources) {
			if (source.get(attribute) != null) {
				return source;
			}
		}
		return null;
	}

	@Nullable Object raw(String attribute) {
		PolicyValues source = sourceSetting(attribute);
		return (source != null) ? source.get(attribute) : null;
	}

	/** Whether a source other than the annotation sets the attribute: a property. */
	boolean isConfigured(String attribute) {
		PolicyValues source = sourceSetting(attribute);
		return source != null && !PolicyValues.ANNOTATION.equals(source.source());
	}

	/** What a message about the attribute it starts with ({@code 'limit' must ...}) adds: the property that set it. */
	String fromProperty(String message) {
		int end = message.startsWith("'") ? message.indexOf('\'', 1) : -1;
		PolicyValues source = (end > 0) ? sourceSetting(message.substring(1, end)) : null;
		if (source == null || PolicyValues.ANNOTATION.equals(source.source())) {
			return "";
		}
		return " (from " + source.sourceOf(message.substring(1, end)) + ")";
	}

	<T> T getOrDefault(String attribute, Class<T> type, T fallback) {
		T value = get(attribute, type);
		return (value != null) ? value : fallback;
	}

	@SuppressWarnings("unchecked")
	<T> @Nullable T get(String attribute, Class<T> type) {
		Object value = raw(attribute);
		if (value == null || type.isInstance(value)) {
			return (T) value;
		}
		try {
			return (T) convert(value, type);
		}
		catch (IllegalArgumentException ex) {
			PolicyValues source = sourceSetting(attribute);
			throw PolicyParser.invalid(this.name, this.where, "'" + attribute + "' cannot be '" + value + "'"
					+ ((source != null && !PolicyValues.ANNOTATION.equals(source.source()))
							? " (from " + source.sourceOf(attribute) + ")" : "")
					+ ": " + ex.getMessage());
		}
	}

	private static Object convert(Object value, Class<?> type) {
		String text = value.toString().trim();
		if (type == Long.class) {
			if (value instanceof Number number) {
				return number.longValue();
			}
			return Long.parseLong(text);
		}
		if (type == Boolean.class) {
			if (!text.equalsIgnoreCase("true") && !text.equalsIgnoreCase("false")) {
				throw new IllegalArgumentException("expected true or false");
			}
			return Boolean.parseBoolean(text);
		}
		if (type == String.class) {
			return text;
		}
		if (type == List.class) {
			if (value instanceof Object[] array) {
				return Arrays.stream(array).map(String::valueOf).toList();
			}
			if (value instanceof Collection<?> collection) {
				return collection.stream().map(String::valueOf).toList();
			}
			return Arrays.stream(text.split(",")).map(String::trim).toList();
		}
		if (type.isEnum()) {
			String constant = text.toUpperCase(Locale.ROOT).replace('-', '_');
			for (Object candidate : type.getEnumConstants()) {
				if (((Enum<?>) candidate).name().equals(constant)) {
					return candidate;
				}
			}
			List<String> names = new ArrayList<>();
			for (Object candidate : type.getEnumConstants()) {
				names.add(((Enum<?>) candidate).name().toLowerCase(Locale.ROOT).replace('_', '-'));
			}
			throw new IllegalArgumentException("expected one of " + String.join(", ", names));
		}
		throw new IllegalArgumentException("unsupported type " + type.getSimpleName());
	}

	/** Where an attribute no source sets takes its value from: its default. */
	static final String DEFAULT = "default";

	/** By attribute, where the value came from: every attribute of the policy, as the endpoint shows them. */
	Map<String, String> sources(RateLimitPolicy policy) {
		Map<String, String> sources = new LinkedHashMap<>();
		for (String attribute : PolicyParser.SHOWN) {
			if ((attribute.equals("burst") && !policy.algorithm().isBucket())
					|| (attribute.equals("zone") && policy.calendar() == null)) {
				continue;
			}
			if (attribute.equals("window") && policy.algorithm() == Algorithm.CONCURRENCY) {
				attribute = "hold"; // what a concurrency limit's window is written as
			}
			PolicyValues source = sourceSetting(attribute);
			if (source != null) {
				sources.put(attribute, source.sourceOf(attribute));
			}
			else {
				sources.put(attribute, attribute.equals("failure-mode") ? "ratelimit.failure-mode" : DEFAULT);
			}
		}
		for (String attribute : new TreeSet<>(PolicyParser.PASSED_ON.keySet())) {
			PolicyValues source = sourceSetting(attribute);
			sources.put(attribute, (source != null) ? source.sourceOf(attribute) : DEFAULT);
		}
		for (String attribute : PolicyParser.PER_REQUEST) {
			PolicyValues source = sourceSetting(attribute);
			sources.put(attribute, (source != null) ? source.sourceOf(attribute) : DEFAULT);
		}
		return sources;
	}

}
