package io.github.ratelimit.sample;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/layers.md shows the sample's configuration as it is: the {@code ratelimit} section of its application.yml,
 * whose every contract {@link LayersOverHttpTests} and the samples-over-http module prove over HTTP.
 */
class LayersDocumentationTests {

	@Test
	void theConfigurationInTheDocsIsTheSamplesAsWritten() throws IOException {
		String docs = Files.readString(Path.of("..", "docs", "layers.md"));
		int start = docs.indexOf("```yaml\n");
		assertThat(start).as("a yaml block in docs/layers.md").isNotNegative();
		String block = docs.substring(start + "```yaml\n".length(), docs.indexOf("```", start + 8));
		Map<String, Object> documented = new Yaml().load(block);
		Map<String, Object> sample;
		try (InputStream in = getClass().getResourceAsStream("/application.yml")) {
			sample = new Yaml().load(in);
		}
		assertThat(documented.get("ratelimit")).isNotNull().isEqualTo(sample.get("ratelimit"));
	}

}
