package io.github.ratelimit.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The rules of the module layout, checked by each module's tests on its own classes: the core knows nothing of
 * Spring or HTTP, stores know nothing of Spring Boot or the web, and no two packages depend on each other.
 */
public final class LayoutRules {

	private static final String[] WEB = { "jakarta.servlet..", "org.springframework.web..",
			"org.springframework.http..", "org.springframework.boot.." };

	private LayoutRules() {
	}

	/**
	 * Import the production classes (no tests) of this project's packages found on the classpath.
	 * @param packages the packages to import, e.g. {@code io.github.ratelimit}
	 * @return the classes
	 */
	public static JavaClasses productionClasses(String... packages) {
		return new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
			.importPackages(packages);
	}

	/**
	 * The core (model, limiter, SPI, memory store) imports no Spring, no servlet and no HTTP types.
	 * @return the rule
	 */
	public static ArchRule coreIsFreeOfSpringAndHttp() {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(concat(WEB, "org.springframework.."))
			.as("the core imports no Spring, servlet or HTTP types");
	}

	/**
	 * A store module imports no Spring Boot, servlet or web types.
	 * @return the rule
	 */
	public static ArchRule storesAreFreeOfBootAndWeb() {
		return noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage(WEB)
			.as("a store imports no Spring Boot, servlet or web types");
	}

	/**
	 * No package depends, directly or through others, on a package that depends on it.
	 * @return the rule
	 */
	public static ArchRule noPackageCycles() {
		return slices().assignedFrom(new SliceAssignment() {

			@Override
			public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
				return javaClass.getPackageName().startsWith("io.github.ratelimit")
						? SliceIdentifier.of(javaClass.getPackageName()) : SliceIdentifier.ignore();
			}

			@Override
			public String getDescription() {
				return "every package of io.github.ratelimit";
			}

		}).should().beFreeOfCycles();
	}

	private static String[] concat(String[] first, String last) {
		String[] all = java.util.Arrays.copyOf(first, first.length + 1);
		all[first.length] = last;
		return all;
	}

}
