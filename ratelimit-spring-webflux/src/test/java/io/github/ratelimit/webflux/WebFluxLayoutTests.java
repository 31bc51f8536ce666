package io.github.ratelimit.webflux;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class WebFluxLayoutTests {

	private final JavaClasses webflux = LayoutRules.productionClasses("io.github.ratelimit.webflux");

	@Test
	void theWebFluxRequestAdapterNeverCallsTheEngine() {
		LayoutRules.requestAdaptersNeverCallTheEngine().check(this.webflux);
	}

	@Test
	void theWebFluxAdaptersDecideNothing() {
		LayoutRules.adaptersDecideNothing().check(this.webflux);
	}

	@Test
	void theWebFluxAdaptersImportNoOtherWebStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("jakarta.servlet..", "org.springframework.web.servlet..",
				"io.github.ratelimit.webmvc..", "io.github.ratelimit.gateway..").check(this.webflux);
	}

	@Test
	void theWebFluxAdaptersHaveNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.webflux);
	}

}
