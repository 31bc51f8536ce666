package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/configuration.md is generated: every property of the configuration metadata the build writes (its type, its
 * default read off a fresh properties object, its description), then the settings of a policy, a filter and a plan
 * (map values, which the metadata does not describe) from their fields' javadoc. This test fails when the page is out
 * of date, and writes the page afresh with {@code -Dconfiguration-reference.write=true}.
 */
class ConfigurationReferenceTests {

	private static final Path METADATA = Path.of("target/classes/META-INF/spring-configuration-metadata.json");

	private static final Path PAGE = Path.of("../docs/configuration.md");

	private static final Path SOURCES = Path.of("src/main/java/io/github/ratelimit/autoconfigure");

	private static final String REGENERATE = "mvn -B -pl ratelimit-spring-boot-autoconfigure test "
			+ "-Dtest=ConfigurationReferenceTests -Dconfiguration-reference.write=true";

	@Test
	void theConfigurationReferenceIsUpToDate() throws IOException {
		String page = render();
		if (Boolean.getBoolean("configuration-reference.write")) {
			Files.writeString(PAGE, page, StandardCharsets.UTF_8);
		}
		String current = Files.exists(PAGE) ? Files.readString(PAGE, StandardCharsets.UTF_8) : "";
		assertThat(current).as("docs/configuration.md is out of date: regenerate it with\n  " + REGENERATE)
			.isEqualTo(page);
	}

	@Test
	void everyPropertyIsInTheReferenceWithADescription() throws IOException {
		String page = render();
		for (JsonNode property : properties()) {
			assertThat(page).contains("`" + property.get("name").asString() + "`");
			assertThat(text(property, "description")).as(property.get("name").asString()).isNotBlank();
		}
	}

	private static String render() throws IOException {
		StringBuilder page = new StringBuilder();
		page.append("# Configuration reference\n\n")
			.append("Every property of the starter: its type, its default and what it does. Generated from the ")
			.append("configuration metadata the build writes and from the javadoc of the policy settings, by ")
			.append("`ConfigurationReferenceTests`, which fails when this page is out of date; regenerate it with\n\n")
			.append("```shell\n")
			.append("mvn -B -q -pl ratelimit-spring-boot-autoconfigure -am install -DskipTests\n")
			.append(REGENERATE)
			.append("\n```\n\n")
			.append("Durations take a unit (`200ms`, `5s`, `1m`); without one, the unit the description names. ")
			.append("Names with dots go in brackets: `ratelimit.policies.[OrderController.list].limit`.\n");
		Map<String, List<JsonNode>> byGroup = new TreeMap<>();
		for (JsonNode property : properties()) {
			String name = property.get("name").asString();
			String group = name.substring(0, name.lastIndexOf('.'));
			byGroup.computeIfAbsent(group, (g) -> new ArrayList<>()).add(property);
		}
		byGroup.forEach((group, properties) -> {
			page.append("\n## `").append(group).append("`\n\n");
			page.append("| property | type | default | description |\n|---|---|---|---|\n");
			for (JsonNode property : properties) {
				page.append("| `")
					.append(property.get("name").asString())
					.append("` | ")
					.append(type(text(property, "type")))
					.append(" | ")
					.append(cell(defaultOf(property)))
					.append(" | ")
					.append(cell(text(property, "description")))
					.append(" |\n");
			}
		});
		settings(page, "ratelimit.policies.<name>", "Each policy's settings, over the annotations that declare it.",
				List.of(PolicyProperties.class), new PolicyProperties());
		settings(page, "ratelimit.filters.<name>",
				"Each filter's settings: where it applies, and every setting of a policy above.",
				List.of(FilterProperties.class), new FilterProperties());
		settings(page, "ratelimit.plans.<plan>.<policy>", "What a plan changes of one policy.",
				List.of(PlanProperties.class), new PlanProperties());
		return page.toString();
	}

	private static void settings(StringBuilder page, String prefix, String intro, Collection<Class<?>> types,
			Object fresh) throws IOException {
		page.append("\n## `").append(prefix).append("`\n\n").append(intro).append("\n\n");
		page.append("| property | type | default | description |\n|---|---|---|---|\n");
		BeanWrapperImpl defaults = new BeanWrapperImpl(fresh);
		for (Class<?> type : types) {
			for (Map.Entry<String, String> field : javadocOfFields(type).entrySet()) {
				String name = field.getKey();
				String propertyType = fieldType(type, name);
				page.append("| `")
					.append(prefix)
					.append('.')
					.append(kebab(name))
					.append("` | ")
					.append(type(propertyType))
					.append(" | ")
					.append(cell(value(defaults.getPropertyValue(name))))
					.append(" | ")
					.append(cell(field.getValue()))
					.append(" |\n");
			}
		}
	}

	private static List<JsonNode> properties() throws IOException {
		JsonNode metadata = JsonMapper.builder().build().readTree(Files.readString(METADATA, StandardCharsets.UTF_8));
		List<JsonNode> properties = new ArrayList<>();
		for (JsonNode property : metadata.get("properties")) {
			String type = text(property, "type");
			if (!type.startsWith("java.util.Map<")) { // a policy, filter or plan by name: their own sections
				properties.add(property);
			}
		}
		properties.sort((a, b) -> a.get("name").asString().compareTo(b.get("name").asString()));
		return properties;
	}

	/** The default the metadata states, else the value of a fresh instance of the class that declares it. */
	private static String defaultOf(JsonNode property) {
		JsonNode stated = property.get("defaultValue");
		if (stated != null && !stated.isNull()) {
			List<String> values = new ArrayList<>();
			for (JsonNode value : stated.isArray() ? stated : List.of(stated)) {
				values.add(value.asString());
			}
			return String.join(", ", values);
		}
		String source = text(property, "sourceType");
		if (source.isEmpty()) {
			return "";
		}
		try {
			Object fresh = Class.forName(source).getDeclaredConstructor().newInstance();
			String name = property.get("name").asString();
			return value(new BeanWrapperImpl(fresh).getPropertyValue(camel(name.substring(name.lastIndexOf('.') + 1))));
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Cannot read the default of " + property.get("name"), ex);
		}
	}

	private static String value(@Nullable Object value) {
		if (value == null) {
			return "";
		}
		if (value instanceof Duration duration) {
			long millis = duration.toMillis();
			return (millis % 60_000 == 0 && millis > 0) ? (millis / 60_000) + "m"
					: (millis % 1_000 == 0 && millis > 0) ? (millis / 1_000) + "s" : millis + "ms";
		}
		if (value instanceof Enum<?> constant) {
			return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
		}
		if (value instanceof Collection<?> values) {
			return String.join(", ", values.stream().map(ConfigurationReferenceTests::value).toList());
		}
		if (value instanceof Map<?, ?> map) {
			return map.isEmpty() ? "" : map.toString();
		}
		return value.toString();
	}

	/** The javadoc of each field of the class, in declaration order, as one line of plain text. */
	private static Map<String, String> javadocOfFields(Class<?> type) throws IOException {
		String source = Files.readString(SOURCES.resolve(type.getSimpleName() + ".java"), StandardCharsets.UTF_8);
		Matcher fields = Pattern
			.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s*)*private [^;=(]*?(\\w+)\\s*[=;]",
					Pattern.DOTALL)
			.matcher(source);
		Map<String, String> javadoc = new LinkedHashMap<>();
		while (fields.find()) {
			javadoc.put(fields.group(2), fields.group(1)
				.replaceAll("(?m)^\\s*\\*\\s?", "")
				.replaceAll("\\{@(?:code|link) ([^}]*)}", "`$1`")
				.replaceAll("\\s+", " ")
				.trim());
		}
		return javadoc;
	}

	private static String fieldType(Class<?> type, String name) {
		try {
			return type.getDeclaredField(name).getGenericType().getTypeName();
		}
		catch (NoSuchFieldException ex) {
			throw new IllegalStateException(type.getSimpleName() + " has javadoc for no field named " + name, ex);
		}
	}

	private static String type(String name) {
		String simple = name.replace('$', '.').replaceAll("[\\w.]*\\.(\\w+)", "$1");
		return "`" + simple.replace(",", ", ") + "`";
	}

	private static String cell(String text) {
		return text.isEmpty() ? "" : text.replace("|", "\\|").replace("\n", " ");
	}

	private static String text(JsonNode node, String field) {
		JsonNode value = node.get(field);
		return (value != null && !value.isNull()) ? value.asString() : "";
	}

	private static String kebab(String camel) {
		return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

	private static String camel(String kebab) {
		StringBuilder camel = new StringBuilder();
		boolean upper = false;
		for (char c : kebab.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

}
