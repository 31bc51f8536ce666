package io.github.ratelimit.webmvc;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.github.ratelimit.architecture.LayoutRules;
import org.junit.jupiter.api.Test;

class WebMvcLayoutTests {

	private final JavaClasses webmvc = LayoutRules.productionClasses("io.github.ratelimit.webmvc");

	@Test
	void theMvcRequestAdapterNeverCallsTheEngine() {
		LayoutRules.requestAdaptersNeverCallTheEngine().check(this.webmvc);
	}

	@Test
	void theMvcAdaptersDecideNothing() {
		LayoutRules.adaptersDecideNothing().check(this.webmvc);
	}

	@Test
	void theMvcAdaptersImportNoOtherWebStackAndNoSpringBoot() {
		LayoutRules.adaptersAreIndependent("org.springframework.web.reactive..", "org.springframework.web.server..",
				"org.springframework.http.server.reactive..", "reactor..", "io.github.ratelimit.webflux..",
				"io.github.ratelimit.gateway..").check(this.webmvc);
	}

	@Test
	void theMvcAdaptersHaveNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.webmvc);
	}

}
